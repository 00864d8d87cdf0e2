"""Runs: the train command's machinery around the course's training Loop.

  args         what a run is asked to do (TrainArgs, the command's flags)
  run_dir      the output directory read once (RunDirectory); what a run starts from
               (preset, vocabulary, weights) and records
  prepare      the flags resolved once into a run (prepared: checked, locked; its
               config, vocabulary, directory, budget), tasks over counted batches
  loop         a prepared run from start to end: the hooked Loop, evaluations, the end
  saving       checkpoints that survive a kill
  stopping     Ctrl-C and SIGTERM as a request checked between steps
  report       the progress bar, the evaluation lines and loss.png
  locks        one process at a time in an output directory
  export       a run copied to a model directory, calibrated
"""
