# Stage: figures. Each notebook (jupytext py:percent, with a `parameters` cell) is run by
# papermill with the python3 kernel; it saves a PNG and its paper-versus-reproduced rows. The
# executed notebook is kept beside the figure.


rule figure:
    input:
        unpack(figure_inputs),
        notebook=figure_notebook,
    output:
        png=report(
            "results/figures/{figure}.png",
            caption="../report/figure.rst",
            category="Figures",
        ),
        notebook="results/notebooks/{figure}.ipynb",
        comparison="results/tables/compare/{figure}.csv",
    log:
        "results/logs/figures/{figure}.log",
    conda:
        "../../envs/gradcode.yaml"
    params:
        parameters=papermill_parameters,
        # the report's caption (workflow/report/captions.yaml), rendered by figure.rst
        caption=figure_caption,
    shell:
        "jupytext --to ipynb --set-kernel python3 -o {output.notebook}.source.ipynb"
        " {input.notebook} > {log} 2>&1"
        " && papermill --log-level WARNING -k python3 {output.notebook}.source.ipynb"
        " {output.notebook} {params.parameters} >> {log} 2>&1"
        " && rm {output.notebook}.source.ipynb"


rule comparison_table:
    input:
        expand("results/tables/compare/{figure}.csv", figure=active_figures()),
    output:
        report(
            "results/tables/comparison.csv",
            caption="../report/comparison.rst",
            category="Paper versus reproduced",
        ),
    log:
        "results/logs/tables/comparison.log",
    # joins small CSVs in a second: the last step of the DAG, not worth a batch job
    localrule: True
    conda:
        "../../envs/gradcode.yaml"
    script:
        "../scripts/comparison_table.py"
