"""The data model of a task: its variants' tables made in memory, profiled, and every declaration
checked against them (docs/authoring.md, "The data model").

The runtime may use this package too (beside `mlabc.api` and a few kernel modules): the preparation logic
of `tables` is the runtime's own (mlab.data writes what it makes), and `checks` is how the
runtime tells, at preparation and at scoring, a failure the task explains from the agent's.

- `tables`: a variant's tables in memory (`split_frames`, `split_table`, `hold_out_validation`,
  `add_id_column`, `generate_seed`, `PrepareError`);
- `model`: what each table holds (`DataModel`, `profile_tables`, `read_prepared`);
- `checks`: the declarations checked against a model (`Finding`, `task_findings`);
- `build`: a variant made in memory from its offline source, the compiler's check (`model_variant`),
  and whether the compiler makes a variant, else preparation checks it (`modelled`);
- `scripts`: the first script a demonstration executes that nothing provides, E570 (`missing_script`).
"""
