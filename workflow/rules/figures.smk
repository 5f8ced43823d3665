# Stage: figures. Each notebook (jupytext py:percent, with a `parameters` cell) is run by
# papermill with the python3 kernel, on Unix sockets (gradcode.pipeline.kernels); it saves a PNG
# and its paper-versus-reproduced rows. The executed notebook is kept, and beside the figure the
# config files and commit that drew it (gradcode.pipeline.provenance; the documentation's paper
# pages caption figures with it).


rule figure:
    input:
        unpack(figure_inputs),
        notebook=figure_notebook,
    output:
        png=report(
            paths.FIGURE,
            caption="../report/figure.rst",
            category="Figures",
        ),
        provenance=paths.FIGURE_PROVENANCE,
        notebook=paths.FIGURE_NOTEBOOK,
        comparison=paths.FIGURE_COMPARISON,
    log:
        paths.log("figures/{figure}"),
    benchmark:
        paths.benchmark("figure", "figures/{figure}")
    # a notebook takes 3-5 s and under 300 MiB; as a batch job it cost as much again in the
    # Snakemake processes SLURM's executor starts for it (workflow/profiles/slurm)
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    params:
        parameters=papermill_parameters,
        # the report's caption (workflow/report/captions.yaml), rendered by figure.rst
        caption=figure_caption,
        # the config files recorded beside the figure; the commit is read by the job, since
        # a changed parameter reruns a job and a commit would redraw every figure
        provenance=FIGURE_PROVENANCE,
    shell:
        "jupytext --to ipynb --set-kernel python3 -o {output.notebook}.source.ipynb"
        " {input.notebook} > {log} 2>&1"
        " && papermill --log-level WARNING --engine gradcode -k python3"
        " {output.notebook}.source.ipynb"
        " {output.notebook} {params.parameters} >> {log} 2>&1"
        " && rm {output.notebook}.source.ipynb"
        " && python -m gradcode.pipeline.provenance {output.provenance}"
        " --figure {wildcards.figure} --notebook {input.notebook} {params.provenance}"
        " >> {log} 2>&1"


rule comparison_table:
    input:
        expand(paths.FIGURE_COMPARISON, figure=active_figures()),
    output:
        report(
            paths.COMPARISON_TABLE,
            caption="../report/comparison.rst",
            category="Paper versus reproduced",
        ),
    log:
        paths.log("tables/comparison"),
    benchmark:
        paths.benchmark("comparison_table", "tables/comparison")
    # joins small CSVs in a second: the last step of the DAG, not worth a batch job
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    script:
        "../scripts/comparison_table.py"
