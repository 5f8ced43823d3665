# Stage: measurements on the emulated cluster's links (config `cluster:`, config/cluster.yaml;
# README "A multi-node cluster on one machine"). Run from the cluster's master node with the
# slurm-cluster profile, which starts these MPI jobs one rank per node on TCP.

_CLUSTER = config.get("cluster", {})


if _CLUSTER.get("links"):

    rule cluster_links:
        output:
            links=paths.CLUSTER_LINKS,
            table=paths.CLUSTER_LINKS_TABLE,
        log:
            paths.log("cluster/links"),
        benchmark:
            paths.benchmark("cluster_links", "cluster/links")
        conda:
            "../../envs/gradcode.yaml"
        threads: local_cores()
        resources:
            tasks=_CLUSTER["links"]["nodes"],
            mpi=MPIEXEC,
        params:
            out=lambda wildcards, output: str(Path(output.links).parent),
            args=cluster_probe_args(_CLUSTER["links"]),
        shell:
            "{resources.mpi} -n {resources.tasks} python -m gradcode.train.linkprobe"
            " --out {params.out} {params.args} > {log} 2>&1"


if _CLUSTER.get("links", {}).get("rates"):
    _SWEEP = cluster_link_rates(_CLUSTER["links"])

    # message time vs rate: the probe at every rate of cluster.links.rates in turn, each
    # inside gradcode cluster rate (the links of the job's nodes at that rate, every node's
    # without SLURM, then the cluster's own back), in ONE job: changing the rates is safe
    # only while nothing else uses those links (the slurm-cluster profile adds --exclusive)
    rule cluster_link_rates:
        output:
            links=expand(paths.LINK_RATE_LINKS, rate=_SWEEP),
            tables=expand(paths.LINK_RATE_TABLE, rate=_SWEEP),
            records=expand(paths.LINK_RATE_RECORD, rate=_SWEEP),
        log:
            paths.log("cluster/link-rates"),
        benchmark:
            paths.benchmark("cluster_link_rates", "cluster/link-rates")
        conda:
            "../../envs/gradcode.yaml"
        threads: local_cores()
        resources:
            tasks=_CLUSTER["links"]["nodes"],
            mpi=MPIEXEC,
        params:
            sweep=lambda wildcards, resources: cluster_rate_sweep(
                _CLUSTER["links"], resources.mpi, resources.tasks
            ),
        shell:
            "({params.sweep}) > {log} 2>&1"

    # the sweep's index (stated rate -> its probe), the figure cluster_link_rates's input
    rule cluster_link_rates_index:
        input:
            links=rules.cluster_link_rates.output.links,
            records=rules.cluster_link_rates.output.records,
        output:
            paths.CLUSTER_LINK_RATES,
        log:
            paths.log("cluster/link-rates-index"),
        benchmark:
            paths.benchmark("cluster_link_rates_index", "cluster/link-rates-index")
        localrule: True
        conda:
            "../../envs/gradcode.yaml"
        params:
            rates=_SWEEP,
        script:
            "../scripts/cluster_link_rates.py"


if _CLUSTER.get("cut"):

    ruleorder: train_cut > train

    # every run of the cut experiment: trained as `train` does, with `cut.node`'s link down
    # for `cut.seconds` from iteration `cut.at_iteration` (gradcode cluster cut, recorded in
    # cut.json beside the run's outputs); --fresh: a rerun starts over, never resumes
    rule train_cut:
        input:
            paths.RUN_FILE,
        output:
            summary=paths.RUN_SUMMARY,
            log=paths.RUN_LOG,
            model=paths.RUN_MODEL,
            cut=paths.RUN_CUT,
        log:
            paths.log("train/{run}"),
        benchmark:
            paths.benchmark("train_cut", "train/{run}")
        wildcard_constraints:
            run=cut_runs_pattern(_CLUSTER["cut"]),
        conda:
            "../../envs/gradcode.yaml"
        threads: local_cores()
        resources:
            tasks=lambda wildcards: run_ranks(wildcards.run),
            mpi=MPIEXEC,
            mem_mb_per_cpu=train_mem_mb_per_cpu,
            runtime=train_runtime,
        params:
            out=lambda wildcards, output: str(Path(output.summary).parent),
            blas=BLAS_ONE_THREAD,
            cut=cluster_cut_args(_CLUSTER["cut"]),
        shell:
            "{params.blas} gradcode cluster cut {params.cut} --log {output.log}"
            " --record {output.cut} --"
            " env {resources.mpi} -n {resources.tasks} python -m gradcode.train {input}"
            " --out {params.out} --fresh > {log} 2>&1"
            " && python -m gradcode.runlogs.world_size {output.summary} {resources.tasks}"
            " >> {log} 2>&1"


if LATENCY_RUNS:

    ruleorder: train_latency > train

    # runs whose links state a latency (gradcode.pipeline.latency): inside gradcode cluster
    # latency, which holds what is sent to the job's nodes for that latency while the job runs
    # and puts the cluster's own back after it (a cluster brought up without latency gets a
    # delayer for the job, unless the run states none); latency.json says when it held
    rule train_latency:
        input:
            paths.RUN_FILE,
        output:
            summary=paths.RUN_SUMMARY,
            log=paths.RUN_LOG,
            model=paths.RUN_MODEL,
            latency=paths.RUN_LATENCY,
        log:
            paths.log("train/{run}"),
        benchmark:
            paths.benchmark("train_latency", "train/{run}")
        wildcard_constraints:
            run=runs_pattern(LATENCY_RUNS),
        conda:
            "../../envs/gradcode.yaml"
        threads: local_cores()
        resources:
            tasks=lambda wildcards: run_ranks(wildcards.run),
            mpi=MPIEXEC,
            mem_mb_per_cpu=train_mem_mb_per_cpu,
            runtime=train_runtime,
        params:
            out=lambda wildcards, output: str(Path(output.summary).parent),
            blas=BLAS_ONE_THREAD,
            latency=lambda wildcards: LATENCY_RUNS[wildcards.run],
        shell:
            "{params.blas} gradcode cluster latency --latency {params.latency}"
            " --record {output.latency} --"
            " {resources.mpi} -n {resources.tasks} python -m gradcode.train {input}"
            " --out {params.out} > {log} 2>&1"
            " && python -m gradcode.runlogs.world_size {output.summary} {resources.tasks}"
            " >> {log} 2>&1"


if NODE_LOSS_RUNS:

    ruleorder: train_lost > train

    # runs with faults.lose_node (gradcode.pipeline.faults): on Open MPI with ULFM over the
    # nodes (gradcode cluster ulfm: one launcher on the master's node, rank r on the r-th of
    # the job's nodes), inside gradcode cluster lose, which loses the node of the run's worker
    # at its iteration (every process on it killed, or its link down) and, once the run is
    # over, gives it back (SLURM: marked DOWN, which drops it from the --no-kill job, then its
    # slurmd again), so the cluster is whole for the next job; lost.json says when and how.
    # Judged as train_faults' runs: a code that cannot go on without the lost worker stops
    # with exit status 3, its expected result.
    rule train_lost:
        input:
            paths.RUN_FILE,
        output:
            summary=paths.RUN_SUMMARY,
            log=paths.RUN_LOG,
            model=paths.RUN_MODEL,
            lost=paths.RUN_LOST,
        log:
            paths.log("train/{run}"),
        benchmark:
            paths.benchmark("train_lost", "train/{run}")
        wildcard_constraints:
            run=runs_pattern(NODE_LOSS_RUNS),
        conda:
            "../../envs/gradcode.yaml"
        threads: local_cores()
        resources:
            tasks=lambda wildcards: run_ranks(wildcards.run),
            mpi="gradcode cluster ulfm",
            mem_mb_per_cpu=train_mem_mb_per_cpu,
            runtime=train_runtime,
        params:
            out=lambda wildcards, output: str(Path(output.summary).parent),
            blas=BLAS_ONE_THREAD,
            lose=lambda wildcards: cluster_lose_args(wildcards.run),
        shell:
            "status=0; {params.blas} gradcode cluster lose {params.lose} --log {output.log}"
            " --record {output.lost} --return --"
            " {resources.mpi} -n {resources.tasks} -- python -m gradcode.train {input}"
            " --out {params.out} --fresh > {log} 2>&1 || status=$?;"
            " python -m gradcode.pipeline.faults {input} {output.summary} $status >> {log} 2>&1"
