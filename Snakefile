# gradcode: raw data -> prepared data -> codes -> runs -> tables -> figures -> report.
# Thin on purpose: each stage lives in its own file under workflow/rules/.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/codes.smk"
include: "workflow/rules/analyze.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/fit.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/figures.smk"


rule all:
    default_target: True
    input:
        all_outputs(),


# every job caches the bytecode it compiles (gradcode.pipeline.bytecode)
onstart:
    notice = bytecode.cache_for_jobs()
    if notice:
        print(notice, file=sys.stderr)


# where the time went: every job's benchmark file added up by rule (issue 50)
onsuccess:
    print(rule_times.report(paths.BENCHMARKS, paths.RULE_TIMES), end="")
