# Stage: Monte Carlo completion times of the papers' timing models (presets of gradcode.sim)
# and of the spec files of simulate.specs (any registered code or timing model, plug-ins too).


rule simulate:
    output:
        table=paths.SIMULATION,
        sidecar=paths.sidecar(paths.SIMULATION),
    log:
        paths.log("sim/{preset}"),
    benchmark:
        paths.benchmark("simulate", "sim/{preset}")
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
        table=paths.SPEC_SIMULATION,
        sidecar=paths.sidecar(paths.SPEC_SIMULATION),
    log:
        paths.log("sim/spec/{spec}"),
    benchmark:
        paths.benchmark("simulate_spec", "sim/spec/{spec}")
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
