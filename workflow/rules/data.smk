# Stage: prepared data sets (features, labels, split, provenance) from the raw files.


rule prepare_data:
    output:
        directory(paths.DATA),
    log:
        paths.log("data/{dataset}/{variant}"),
    benchmark:
        paths.benchmark("prepare_data", "data/{dataset}/{variant}")
    conda:
        "../../envs/gradcode.yaml"
    shell:
        "gradcode data prepare {wildcards.dataset} --variant {wildcards.variant}"
        " --out {output} > {log} 2>&1"
