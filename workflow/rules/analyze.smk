# Stage: exact and Monte Carlo analyses of the codes (loads, communication costs, decoding
# errors and costs) that the papers plot beside their timing results (gradcode.analysis).


rule analyze:
    output:
        table=paths.ANALYSIS,
        sidecar=paths.sidecar(paths.ANALYSIS),
    log:
        paths.log("analysis/{analysis}"),
    benchmark:
        paths.benchmark("analyze", "analysis/{analysis}")
    conda:
        "../../envs/gradcode.yaml"
    params:
        trials=lambda wildcards: analysis_trials(wildcards.analysis),
        seed=config["analyze"]["seed"],
    shell:
        "gradcode analyze {wildcards.analysis} --trials {params.trials} --seed {params.seed}"
        " --out {output.table} 2> {log}"
