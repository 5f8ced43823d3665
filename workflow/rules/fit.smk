# Stage: fit studies (config `fit`, gradcode.pipeline.fit_studies): paper 000's timing model
# fitted to a study's calibration runs, every code ranked under it, the recommended one
# trained by rule train (run <study>/recommended) beside the prediction.


rule fit_timing:
    input:
        calibration_logs,
    output:
        paths.FIT_FITTED,
    log:
        paths.log("fit/{study}.fit"),
    benchmark:
        paths.benchmark("fit_timing", "fit/{study}.fit")
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    params:
        runs=lambda wildcards, input: " ".join(str(Path(f).parent) for f in input),
        args=lambda wildcards: shlex.join(fit_study(wildcards).fit_arguments()),
    shell:
        "gradcode timing fit {params.runs} --out {output} {params.args} > {log} 2>&1"


rule recommend:
    input:
        paths.FIT_FITTED,
    output:
        json=paths.FIT_RECOMMENDATION,
        csv=paths.FIT_RECOMMENDATION_TABLE,
    log:
        paths.log("fit/{study}.recommend"),
    benchmark:
        paths.benchmark("recommend", "fit/{study}.recommend")
    conda:
        "../../envs/gradcode.yaml"
    params:
        args=lambda wildcards: shlex.join(fit_study(wildcards).recommend_arguments()),
    shell:
        "gradcode codes recommend --spec {input} {params.args} --out {output.csv} --json"
        " > {output.json} 2> {log}"


rule recommended_run_config:
    input:
        calibration=lambda wildcards: paths.RUN_FILE.format(
            run=fit_study(wildcards).calibrate[0]
        ),
        recommendation=paths.FIT_RECOMMENDATION,
    output:
        paths.RECOMMENDED_RUN_FILE,
    log:
        paths.log("fit/{study}.recommended"),
    benchmark:
        paths.benchmark("recommended_run_config", "fit/{study}.recommended")
    wildcard_constraints:
        study="|".join(re.escape(name) for name in FIT_STUDIES) or "(?!)",
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    shell:
        "python -m gradcode.pipeline.fit_studies {input.calibration} {input.recommendation}"
        " {output} > {log} 2>&1"
