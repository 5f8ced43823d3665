# Stage: fit studies (config `fit`, gradcode.pipeline.fit_studies): paper 000's timing model
# fitted to a study's calibration runs, every code ranked under it, the recommended one
# trained by rule train (run <study>/recommended) beside the prediction.


rule fit_timing:
    input:
        calibration_logs,
    output:
        "results/fit/{study}/fitted.yaml",
    log:
        "results/logs/fit/{study}.fit.log",
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
        "results/fit/{study}/fitted.yaml",
    output:
        json="results/fit/{study}/recommend.json",
        csv="results/fit/{study}/recommend.csv",
    log:
        "results/logs/fit/{study}.recommend.log",
    conda:
        "../../envs/gradcode.yaml"
    params:
        args=lambda wildcards: shlex.join(fit_study(wildcards).recommend_arguments()),
    shell:
        "gradcode codes recommend --spec {input} {params.args} --out {output.csv} --json"
        " > {output.json} 2> {log}"


rule recommended_run_config:
    input:
        calibration=lambda wildcards: f"results/train/{fit_study(wildcards).calibrate[0]}/run.yaml",
        recommendation="results/fit/{study}/recommend.json",
    output:
        "results/train/{study}/recommended/run.yaml",
    log:
        "results/logs/fit/{study}.recommended.log",
    wildcard_constraints:
        study="|".join(re.escape(name) for name in FIT_STUDIES) or "(?!)",
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    shell:
        "python -m gradcode.pipeline.fit_studies {input.calibration} {input.recommendation}"
        " {output} > {log} 2>&1"
