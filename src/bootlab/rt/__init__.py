"""Python side of the real-time scheduler framework (docs/rt-formats.md, docs/rt-analysis.md).

config         the configuration file the framework loads (TOML or JSON), validated
analysis       response-time, demand and supply-bound computations on plain numbers
schedulability the analysis applied to a configuration: per server and per task verdicts
simulate       the ideal schedule the plugins are meant to produce, as a trace
trace          reading and writing the recorder's trace format
schedule       jobs, execution segments and server budgets derived from a trace
gantt, grasp, perfetto, report   views of a schedule
check          a recorded trace against the analysis and the simulation
"""
