"""The sandbox's limits, in one place (notebooks/README.md says what happens at each).

Seconds are CPU seconds, not the wall clock's: a busy machine costs no one a
point. A run's seconds are the CPU time of all its processes and threads
(``cpu_clock.py``, read from /proc outside the learner's process), and a
cell that sleeps is stopped by the same number of seconds of its wall clock
*charged* to it: the time its threads waited for a CPU that the machine gave
to others is left out, a sleep is counted in full. A run whose wall clock
passes ``STARVED_FACTOR`` times its limit while both stay under it was
starved by the machine: stopped, and its functions go to a teacher with that
reason, never a zero. Each function's run is stopped from outside the
learner's process (the sandbox's first process reads the clocks and kills
the run's processes); the whole sandbox is watched from outside it
(``watchdog.Watch``): its memory and its processes, all of them together,
and the submission's seconds.
"""

from summarizer.grading import cpu_clock

# The course's answers, graded here on the 2 cores at load 9: 5.2 CPU s at most for a function's run
# (16 s of wall clock), 7.7 CPU s for Part 5's (21 s); 838 MB
# and 2 processes in the sandbox at most. A function that loops in Parts 4 and 5 costs
# FUNCTION_SECONDS + both WHOLE_SECONDS, well within SUBMISSION_SECONDS.

# CPU seconds (and charged seconds) of one graded function's run (its cells and its checks).
FUNCTION_SECONDS = 30
# Parts 4 and 5 build the learner's whole model and load the shipped weights.
WHOLE_SECONDS = {'part 4': 45, 'part 5': 45}
# CPU seconds (and charged seconds) of each statement of a cell other than the function's own.
OTHER_CELLS_SECONDS = 5
# CPU seconds (and charged seconds) of one submission in the sandbox, every run together.
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
# The teacher's own process reads, parses and compares a submission's cells outside the
# sandbox: characters of one learner cell it reads (the course's longest solution cell
# holds about 2,000), and of all of them together; a cell past either goes to a teacher
# unread (it still runs in the sandbox, whose outcome the teacher sees). Seconds of the
# comparison with the package's code (near-copies): past them, the rest is left unread.
CELL_CHARS = 100_000
NOTEBOOK_CHARS = 400_000
READING_SECONDS = 30
# How often (seconds) the watch outside the sandbox looks at it.
WATCH_SECONDS = 0.1
# How often (seconds) the worker reads a function's run's clocks.
ITEM_WATCH_SECONDS = 0.25
# A run whose wall clock passes this many times its limit, its CPU and charged
# seconds under it, was starved by a busy machine: stopped, for a teacher (the
# worker reads it inside the sandbox, where this module is not: it is cpu_clock's).
STARVED_FACTOR = cpu_clock.STARVED_FACTOR


def function_seconds(probe):
  """The seconds (CPU, and charged) of a run: a function's, or a whole-model part's."""
  return WHOLE_SECONDS.get(probe, FUNCTION_SECONDS)
