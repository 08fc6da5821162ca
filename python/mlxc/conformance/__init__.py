"""StableHLO's conformance suites, run through mlxc's public API.

    mlxc conformance ../shared/conformance/stablehlo          (every case, 2 workers)

`suites` finds the cases, `harness` turns checks into results, `checks` compares,
`oracle` runs the StableHLO interpreter for programs without checks, `runner` keeps
crashes and hangs to one case each, `out_of_scope` lists what mlxc does not aim at.
"""
