# Stage: Monte Carlo completion times of the papers' timing models (presets of gradcode.sim)
# and of the spec files of simulate.specs (any registered code or timing model, plug-ins too).


rule simulate:
    output:
        table="results/sim/{preset}.csv",
        sidecar="results/sim/{preset}.csv.json",
    log:
        "results/logs/sim/{preset}.log",
    wildcard_constraints:
        preset="[^/]+",
    conda:
        "../../envs/gradcode.yaml"
    params:
        trials=lambda wildcards: simulation_trials(wildcards.preset),
        seed=config["simulate"]["seed"],
    shell:
        "gradcode simulate {wildcards.preset} --trials {params.trials} --seed {params.seed}"
        " --out {output.table} 2> {log}"


rule simulate_spec:
    input:
        spec_file,
    output:
        table="results/sim/spec/{spec}.csv",
        sidecar="results/sim/spec/{spec}.csv.json",
    log:
        "results/logs/sim/spec/{spec}.log",
    wildcard_constraints:
        spec="[^/]+",
    conda:
        "../../envs/gradcode.yaml"
    params:
        trials=config["simulate"]["trials"],
        seed=config["simulate"]["seed"],
    shell:
        "gradcode simulate {input} --trials {params.trials} --seed {params.seed}"
        " --out {output.table} 2> {log}"
