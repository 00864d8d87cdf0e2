"""The sandbox's limits, in one place (notebooks/README.md says what happens at each).

Wall clock, not CPU time: a cell that sleeps costs as much as one that
computes. Each function's run is stopped from outside the learner's process
(the sandbox's first process kills the run's processes); the whole sandbox is
watched from outside it (``sandbox.Watch``): its memory and its processes,
all of them together, and the submission's seconds.
"""

# The course's answers, graded here with other jobs on the 2 cores: 9 s at most for
# a function's run, 13 s for Part 5's, 838 MB and 2 processes in the sandbox at
# most, 95 s a submission. A function that loops in Parts 4 and 5 costs
# FUNCTION_SECONDS + both WHOLE_SECONDS, well within SUBMISSION_SECONDS.

# Wall-clock seconds of one graded function's run (its cells and its checks).
FUNCTION_SECONDS = 30
# Parts 4 and 5 build the learner's whole model and load the shipped weights.
WHOLE_SECONDS = {'part 4': 45, 'part 5': 45}
# Wall-clock seconds of each statement of a cell other than the function's own.
OTHER_CELLS_SECONDS = 5
# Wall-clock seconds of one submission in the sandbox, every function's run together.
SUBMISSION_SECONDS = 210
# Address space (MB) of one function's run, each process (RLIMIT_AS; JAX reserves a lot).
PROCESS_MEMORY_MB = 6144
# Memory (MB) of the sandbox's processes together (proportional set size, from /proc).
SANDBOX_MEMORY_MB = 3072
# Processes in the sandbox at once (its first process included).
SANDBOX_PROCESSES = 16
# Size (MB) of the sandbox's /tmp and /dev/shm (each a tmpfs in memory); one file at most FILE_MB.
TMP_MB = 256
FILE_MB = 64
# How often (seconds) the watch outside the sandbox looks at it.
WATCH_SECONDS = 0.1


def function_seconds(probe):
  """The wall-clock seconds of a run: a function's, or a whole-model part's."""
  return WHOLE_SECONDS.get(probe, FUNCTION_SECONDS)
