# Stage: training runs as MPI jobs (mpiexec locally; srun --mpi=pmi2 under the slurm profile;
# runs that lose workers on purpose on Open MPI with ULFM, train_faults below).


# a YAML file written in a second: never worth a batch job of its own under a SLURM profile
rule run_config:
    input:
        source=lambda wildcards: TRAIN_RUNS[wildcards.run][0],
        data=lambda wildcards: run_data_folder(wildcards.run),
    output:
        paths.RUN_FILE,
    log:
        paths.log("train/{run}.config"),
    benchmark:
        paths.benchmark("run_config", "train/{run}.config")
    # the config's runs; a fit study's recommended run has its own (workflow/rules/fit.smk)
    wildcard_constraints:
        run=runs_pattern(TRAIN_RUNS) if TRAIN_RUNS else "(?!)",
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    params:
        document=lambda wildcards: TRAIN_RUNS[wildcards.run][1],
    script:
        "../scripts/run_config.py"


rule train:
    input:
        paths.RUN_FILE,
    output:
        summary=paths.RUN_SUMMARY,
        log=paths.RUN_LOG,
        model=paths.RUN_MODEL,
    log:
        paths.log("train/{run}"),
    benchmark:
        paths.benchmark("train", "train/{run}")
    conda:
        "../../envs/gradcode.yaml"
    # all local cores: a training run measures wall-clock time, and a job running beside it
    # would skew what the emulated cluster measures (the slurm profile sets 1 per task)
    threads: local_cores()
    # memory per CPU (= per rank) and minutes computed from the run and its data, see
    # gradcode.pipeline.resources; only batch executors use them (the slurm profile)
    resources:
        tasks=lambda wildcards: run_ranks(wildcards.run),
        mpi=MPIEXEC,
        mem_mb_per_cpu=train_mem_mb_per_cpu,
        runtime=train_runtime,
    params:
        out=lambda wildcards, output: str(Path(output.summary).parent),
        # one BLAS thread per rank: the ranks already oversubscribe the cores
        blas=BLAS_ONE_THREAD,
    shell:
        "{params.blas}"
        " {resources.mpi} -n {resources.tasks} python -m gradcode.train {input} --out {params.out}"
        " > {log} 2>&1"
        " && python -m gradcode.runlogs.world_size {output.summary} {resources.tasks} >> {log} 2>&1"


if TOLERANT_RUNS:

    ruleorder: train_faults > train

    # runs with faults.tolerate (gradcode.pipeline.faults): on Open MPI with ULFM, through
    # its own launcher locally and inside a SLURM allocation alike (no srun), inside gradcode
    # train inject, which kills faults.kill's workers at their iterations (kills.json says
    # when). --fresh: a rerun starts over, so every kill lands again. A run whose faults take
    # more workers than its code tolerates stops with exit status 3, its expected result;
    # python -m gradcode.pipeline.faults passes that stop and fails on any other status.
    rule train_faults:
        input:
            paths.RUN_FILE,
        output:
            summary=paths.RUN_SUMMARY,
            log=paths.RUN_LOG,
            model=paths.RUN_MODEL,
            kills=paths.RUN_KILLS,
        log:
            paths.log("train/{run}"),
        benchmark:
            paths.benchmark("train_faults", "train/{run}")
        wildcard_constraints:
            run=runs_pattern(TOLERANT_RUNS),
        conda:
            "../../envs/gradcode.yaml"
        threads: local_cores()
        resources:
            tasks=lambda wildcards: run_ranks(wildcards.run),
            mpi=ULFM_LAUNCHER,
            mem_mb_per_cpu=train_mem_mb_per_cpu,
            runtime=train_runtime,
        params:
            out=lambda wildcards, output: str(Path(output.summary).parent),
            blas=BLAS_ONE_THREAD,
        shell:
            "status=0; {params.blas} gradcode train inject {input} --out {params.out}"
            " --record {output.kills} --"
            " {resources.mpi} -n {resources.tasks} python -m gradcode.train {input}"
            " --out {params.out} --fresh > {log} 2>&1 || status=$?;"
            " python -m gradcode.pipeline.faults {input} {output.summary} $status >> {log} 2>&1"
            " && python -m gradcode.runlogs.world_size {output.summary} {resources.tasks}"
            " >> {log} 2>&1"
