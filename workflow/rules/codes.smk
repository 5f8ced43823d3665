# Stage: construct and verify codes; the numerical stability study.


rule verify_code:
    output:
        "results/codes/verify/{code}.json",
    log:
        "results/logs/codes/verify/{code}.log",
    conda:
        "../../envs/gradcode.yaml"
    params:
        args=lambda wildcards: verify_args(wildcards.code),
    shell:
        "gradcode codes verify {params.args} --json > {output} 2> {log}"


rule code_table:
    input:
        expand("results/codes/verify/{code}.json", code=sorted(CODES)),
    output:
        "results/tables/codes.csv",
    log:
        "results/logs/tables/codes.log",
    conda:
        "../../envs/gradcode.yaml"
    script:
        "../scripts/code_table.py"


rule stability:
    output:
        "results/codes/stability.csv",
    log:
        "results/logs/codes/stability.log",
    conda:
        "../../envs/gradcode.yaml"
    params:
        n_min=config["codes"]["stability"]["n_min"],
        n_max=config["codes"]["stability"]["n_max"],
        patterns=config["codes"]["stability"]["patterns"],
    shell:
        "gradcode codes stability --n-min {params.n_min} --n-max {params.n_max}"
        " --patterns {params.patterns} --out {output} 2> {log}"
