# Stage: construct and verify codes; the numerical stability study.


rule verify_code:
    output:
        paths.CODE_VERIFY,
    log:
        paths.log("codes/verify/{code}"),
    benchmark:
        paths.benchmark("verify_code", "codes/verify/{code}")
    # about a second, the paper's exhaustive checks too: less than the two Snakemake
    # processes a batch job starts (workflow/profiles/slurm)
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    params:
        args=lambda wildcards: verify_args(wildcards.code),
    shell:
        "gradcode codes verify {params.args} --json > {output} 2> {log}"


rule code_table:
    input:
        expand(paths.CODE_VERIFY, code=sorted(CODES)),
    output:
        paths.CODE_TABLE,
    log:
        paths.log("tables/codes"),
    benchmark:
        paths.benchmark("code_table", "tables/codes")
    # joins small CSVs in a fraction of a second: not worth a batch job under a SLURM profile
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    script:
        "../scripts/code_table.py"


rule stability:
    output:
        paths.STABILITY,
    log:
        paths.log("codes/stability"),
    benchmark:
        paths.benchmark("stability", "codes/stability")
    conda:
        "../../envs/gradcode.yaml"
    params:
        n_min=config["codes"]["stability"]["n_min"],
        n_max=config["codes"]["stability"]["n_max"],
        patterns=config["codes"]["stability"]["patterns"],
    shell:
        "gradcode codes stability --n-min {params.n_min} --n-max {params.n_max}"
        " --patterns {params.patterns} --out {output} 2> {log}"
