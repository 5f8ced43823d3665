# Stage: training runs as MPI jobs (mpiexec locally; srun --mpi=pmi2 under the slurm profile).


rule run_config:
    input:
        source=lambda wildcards: TRAIN_RUNS[wildcards.run][0],
        data=lambda wildcards: "results/data/{}/{}".format(*run_data(wildcards.run)),
    output:
        "results/train/{run}/run.yaml",
    log:
        "results/logs/train/{run}.config.log",
    conda:
        "../../envs/gradcode.yaml"
    params:
        document=lambda wildcards: TRAIN_RUNS[wildcards.run][1],
    script:
        "../scripts/run_config.py"


rule train:
    input:
        "results/train/{run}/run.yaml",
    output:
        summary="results/train/{run}/summary.json",
        log="results/train/{run}/log.jsonl",
        model="results/train/{run}/model.npy",
    log:
        "results/logs/train/{run}.log",
    conda:
        "../../envs/gradcode.yaml"
    # all local cores: a training run measures wall-clock time, and a job running beside it
    # would skew what the emulated cluster measures (the slurm profile sets 1 per task)
    threads: local_cores()
    # memory per CPU (= per rank) and minutes computed from the run and its data, see
    # gradcode.pipeline.resources; only batch executors use them (the slurm profile)
    resources:
        tasks=lambda wildcards: run_ranks(wildcards.run),
        mpi="mpiexec.hydra",
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
        " && python -m gradcode.train.world_size {output.summary} {resources.tasks} >> {log} 2>&1"
