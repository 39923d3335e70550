"""The compiler: tensor graphs in, kernels out. The pipeline, front to back, with what each step
guarantees to the next (the driver is `lazyarr.realize.schedule_realize`):

  structure_key (schedule)   the graph's structure with its buffers and scalars as parameters (bytes:
                             int64 words a node): a graph seen before on other buffers takes its
                             kernels from the schedule cache and skips the steps up to codegen
  stages                     a graph over `settings.stage_nodes` nodes is realized in parts first
                             (segments of anchors, `realize._realize_stages`); afterwards the rest
                             reads their buffers
  prepare                    tensor-level rewrites: no markers, no complex dtypes (`complex`), empty
                             values folded, large reductions split; every node has a shape
  schedule (`_Rounds`)       realize points chosen, each given a buffer; a pure function of the
                             graph and the buffers it reads (no kernel runs, nothing is recorded)
  rangeify                   each point's value as a kernel: loops (RANGEs), INDEX/LOAD/STORE,
                             REDUCE; reductions it would evaluate redundantly are reported back to
                             the schedule, which makes them points (the feedback pass, `_Rounds`)
  codegen (`codegen.py`)     opts, symbolic, lower_reduce, the renderer's rules, decompositions,
                             final_rewrite, control_flow, linearize, cleanup, render: one kernel's
                             graph to source text in the renderer's language (run when the kernel
                             is first compiled: `ScheduleItem.kernel`; a kernel found in the disk
                             cache skips it)
  compile (runtime)          `executor.compile_all`: every kernel compiled before any value is
                             marked computed, so a compile error leaves the arrays as they were
  run (runtime)              `realize.run` launches the kernels in dependency order

Modules here import the IR (`uop`, `patterns`, `lazyarr.graph`, `lazyarr.ops`) and one another
down this order; only `schedule` and `search` import the runtime (the buffers, devices and items
a schedule is made of)."""
