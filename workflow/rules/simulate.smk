# Stage: Monte Carlo completion times of the papers' timing models (presets of gradcode.sim).


rule simulate:
    output:
        table="results/sim/{preset}.csv",
        sidecar="results/sim/{preset}.csv.json",
    log:
        "results/logs/sim/{preset}.log",
    conda:
        "../../envs/gradcode.yaml"
    params:
        trials=lambda wildcards: simulation_trials(wildcards.preset),
        seed=config["simulate"]["seed"],
    shell:
        "gradcode simulate {wildcards.preset} --trials {params.trials} --seed {params.seed}"
        " --out {output.table} 2> {log}"
