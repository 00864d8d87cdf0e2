"""Search beyond the course's argmax: constraints, greedy and beam search in one XLA loop.

The decoder advances a batch of B articles, each with K rows (its beams;
one for greedy search), by a ``step(tokens (B, K), state) -> (log_probs
(B, K, V), state)`` that it closes over its weights. Every function here is
traceable, so the whole token loop runs inside one ``lax.while_loop`` (as
flax's lm1b sampler and t5x do) and stops when every row has ended.

The constraints, as Hugging Face's ``generate()`` names them:

* ``min_length``: EOS is forbidden until the summary has that many tokens.
* ``no_repeat_ngram_size``: no n-gram appears twice in a summary (the
  summary's own tokens; the article's n-grams may be copied).
* ``length_penalty``: a finished beam is ranked by
  ``sum of log-probabilities / length ** length_penalty``, its length
  counting its tokens and its EOS (as BART's decoder counts them: never 0).
  Above 0 favours longer summaries; 0 ranks by log-probability alone.
"""

import collections
import dataclasses
import functools
import math

import jax
from jax import lax
from jax import numpy as jnp

from summarizer.config import EOS
from summarizer.errors import SummarizerError
from summarizer.inference import search_options
from summarizer.inference.search_options import LENGTH_PENALTY

# When Hugging Face's beam search stops, by default.
EARLY_STOPPING = False
# Memory the caches of one batch of rows may take: more rows are decoded in
# several batches (the course's model keeps 100 MB of cache per row).
ROWS_MEMORY_BYTES = 2 ** 30


@dataclasses.dataclass(frozen=True)
class Search:
  """How summaries are searched for.

  Attributes:
    num_beams: 1 for greedy search; more for beam search.
    length_penalty: Beam search ranks finished summaries by
      ``score / length ** length_penalty``.
    no_repeat_ngram_size: Forbid any n-gram of this many tokens twice in a
      summary (0: no constraint).
    min_length: Forbid EOS before this many summary tokens.
    early_stopping: When beam search stops, as Hugging Face's: True, False
      or 'never' (exact; see ``beam_loop``).
  """
  num_beams: int = 1
  length_penalty: float = LENGTH_PENALTY
  no_repeat_ngram_size: int = 0
  min_length: int = 0
  early_stopping: object = EARLY_STOPPING

  @classmethod
  def from_args(cls, args):
    """The search a command line's ``--num-beams`` ... ``--min-length`` ask for."""
    return cls(args.num_beams, args.length_penalty, args.no_repeat_ngram_size,
               args.min_length)

  def check(self, max_length):
    """Raises ``SummarizerError`` naming the first setting that cannot be used."""
    if not 1 <= self.num_beams <= search_options.MAX_BEAMS:
      raise SummarizerError(f'num_beams must be between 1 and {search_options.MAX_BEAMS}, '
                            f'not {self.num_beams}')
    if self.no_repeat_ngram_size < 0:
      raise SummarizerError('no_repeat_ngram_size must not be negative, not '
                            f'{self.no_repeat_ngram_size}')
    if self.min_length < 0:
      raise SummarizerError(f'min_length must not be negative, not {self.min_length}')
    if self.min_length > max_length:
      raise SummarizerError(f'min_length {self.min_length} is more than max_length '
                            f'{max_length}')
    if not math.isfinite(self.length_penalty):
      raise SummarizerError(f'length_penalty must be a number, not {self.length_penalty}')
    if self.early_stopping not in (True, False, 'never'):
      raise SummarizerError("early_stopping must be True, False or 'never', not "
                            f'{self.early_stopping!r}')
    return self

  @property
  def constrained(self):
    """Whether anything but the plain argmax decides the tokens."""
    return self.num_beams > 1 or self.no_repeat_ngram_size > 0 or self.min_length > 0

  def to_dict(self):
    return dataclasses.asdict(self)


def repeated_ngram_bans(generated, t, n, vocab_size):
  """Marks the tokens that would repeat an n-gram of each row's summary.

  Args:
    generated: Token ids (R, T), of which the first ``t`` are written.
    t: How many tokens each row has (a traced scalar).
    n: The n-gram size (static, at least 1).
    vocab_size: V.

  Returns:
    Boolean array (R, V): True where the token would end an n-gram that the
    row has already written.
  """
  rows, length = generated.shape
  if n > length:
    return jnp.zeros((rows, vocab_size), bool)
  starts = jnp.arange(length - n + 1)                          # (W,) n-gram starts
  window = starts[:, None] + jnp.arange(n - 1)[None, :]        # (W, n-1)
  heads = generated[:, window]                                 # (R, W, n-1)
  following = generated[:, starts + n - 1]                     # (R, W)
  # The row's last n-1 tokens (the clamped slice only matters where t < n-1,
  # and there no n-gram is complete: ``valid`` is all False).
  last = lax.dynamic_slice_in_dim(generated, jnp.maximum(t - (n - 1), 0), n - 1,
                                  axis=1)                      # (R, n-1)
  valid = starts <= t - n                                      # (W,) whole n-grams
  matches = jnp.all(heads == last[:, None, :], axis=-1) & valid[None, :]  # (R, W)
  bans = jnp.zeros((rows, vocab_size), jnp.int32)
  bans = bans.at[jnp.arange(rows)[:, None], following].max(matches.astype(jnp.int32))
  return bans > 0


def constrain(log_probs, generated, t, min_length=0, no_repeat_ngram_size=0):
  """Sets the log-probability of forbidden tokens to -inf.

  Args:
    log_probs: Array (R, V) of the next token's log-probabilities.
    generated: Token ids (R, T) so far, the first ``t`` written.
    t: How many tokens each row has.
    min_length, no_repeat_ngram_size: The constraints (static).

  Returns:
    Array (R, V).
  """
  if min_length > 0:
    log_probs = log_probs.at[:, EOS].set(jnp.where(t < min_length, -jnp.inf,
                                                   log_probs[:, EOS]))
  if no_repeat_ngram_size > 0:
    bans = repeated_ngram_bans(generated, t, no_repeat_ngram_size, log_probs.shape[-1])
    log_probs = jnp.where(bans, -jnp.inf, log_probs)
  return log_probs


def greedy_loop(step, log_probs, state, max_length, min_length=0,
                no_repeat_ngram_size=0, stop_at_eos=True):
  """Greedy search for every row in one ``lax.while_loop``.

  Args:
    step: Function (tokens (R, 1), state) -> (log_probs (R, 1, V), state).
    log_probs: Array (R, V) after each row's prefix.
    state: The rows' model state after their prefixes.
    max_length: Most tokens a row generates (static).
    min_length, no_repeat_ngram_size: The constraints (static).
    stop_at_eos: End a row at its EOS (False: always ``max_length`` tokens).

  Returns:
    (tokens (R, max_length), lengths (R,)): each row's tokens, its EOS
    included, in its first ``lengths`` entries.
  """
  rows = log_probs.shape[0]

  def cond(carry):
    t, _, _, done, _, _ = carry
    return (t < max_length) & ~jnp.all(done)

  def body(carry):
    t, generated, lengths, done, log_probs, state = carry
    allowed = constrain(log_probs, generated, t, min_length, no_repeat_ngram_size)
    tokens = jnp.argmax(allowed, axis=-1).astype(jnp.int32)   # (R,)
    tokens = jnp.where(done, 0, tokens)
    generated = generated.at[:, t].set(tokens)
    ended = ~done & (tokens == EOS) if stop_at_eos else jnp.zeros_like(done)
    lengths = jnp.where(ended, t + 1, lengths)
    log_probs, state = step(tokens[:, None], state)
    return t + 1, generated, lengths, done | ended, log_probs[:, 0], state

  carry = (jnp.int32(0), jnp.zeros((rows, max_length), jnp.int32),
           jnp.full((rows,), max_length, jnp.int32), jnp.zeros((rows,), bool),
           log_probs, state)
  _, generated, lengths, _, _, _ = lax.while_loop(cond, body, carry)
  return generated, lengths


def _normalised(score, length, length_penalty):
  return score / jnp.asarray(length, jnp.float32) ** length_penalty


def _keep_best(seqs, scores, lengths, k):
  """Keeps the k best of candidates (B, C, T), (B, C), (B, C)."""
  scores, keep = lax.top_k(scores, k)                          # (B, k)
  seqs = jnp.take_along_axis(seqs, keep[..., None], axis=1)    # (B, k, T)
  return seqs, scores, jnp.take_along_axis(lengths, keep, axis=1)


def beam_loop(step, expand, reorder, log_probs, state, num_beams, max_length,
              length_penalty=LENGTH_PENALTY, min_length=0, no_repeat_ngram_size=0,
              early_stopping=EARLY_STOPPING):
  """Beam search for every article of a batch in one ``lax.while_loop``.

  Each article's prefill (one row) is copied to ``num_beams`` rows, which
  share its cache. At each step the best ``2 * num_beams`` extensions of an
  article's beams are taken: those ending in EOS join its finished
  summaries (the best ``num_beams`` kept, by normalised score), the best
  ``num_beams`` others go on, and the caches of the rows are reordered to
  match (a gather on the batch axis of every array of the state). When an
  article is done, as Hugging Face's ``early_stopping`` says: True, once
  it has ``num_beams`` finished summaries; False (its default), once its
  best running beam, ranked at its current length, cannot beat its worst
  finished summary; 'never', once no running beam can beat it at any
  length allowed, so that with enough beams the search is exact.

  Args:
    step: Function (tokens (B, K), state) -> (log_probs (B, K, V), state).
    expand: Function (state, K) -> the state with each article's row copied
      to K rows.
    reorder: Function (state, source (B, K)) -> the state whose row k of
      article b is row ``source[b, k]`` of that article.
    log_probs: Array (B, V) after each article's prefix.
    state: The B articles' model state after their prefixes (one row each).
    num_beams: K (static).
    max_length: Most summary tokens, EOS included (static).
    length_penalty, min_length, no_repeat_ngram_size: See the module
      docstring (static).
    early_stopping: True, False or 'never' (static; see above).

  Returns:
    (tokens (B, max_length), lengths (B,), scores (B,)): the best summary of
    each article (its EOS included if it ended) and its normalised score.
  """
  batch, vocab_size = log_probs.shape
  beams = _Beams(batch, num_beams, vocab_size, max_length, length_penalty, min_length,
                 no_repeat_ngram_size, early_stopping)
  carry = _start(beams, expand(state, num_beams), log_probs)
  carry = lax.while_loop(
      lambda carry: (carry[0] < max_length) & ~jnp.all(carry[6]),
      functools.partial(_advance, beams, step, reorder), carry)
  (t, alive, alive_scores, finished, finished_scores, finished_lengths, done, _,
   _) = carry
  # Beams still running at max_length end there, if they beat what finished.
  unfinished = jnp.where(done[:, None], -jnp.inf,
                         _normalised(alive_scores, t, length_penalty))
  finished, finished_scores, finished_lengths = _keep_best(
      jnp.concatenate([finished, alive], axis=1),
      jnp.concatenate([finished_scores, unfinished], axis=1),
      jnp.concatenate([finished_lengths, jnp.full_like(finished_lengths, t)], axis=1), 1)
  return finished[:, 0], finished_lengths[:, 0], finished_scores[:, 0]


class _Beams(collections.namedtuple('_Beams', 'batch k vocab_size max_length length_penalty '
                                    'min_length no_repeat_ngram_size early_stopping')):
  """The static settings of one ``beam_loop``: B articles of K beams each."""

  @property
  def rows(self):
    return self.batch * self.k

  def bound_length(self, t):
    """The length at which a running beam's best possible score is ranked."""
    if self.early_stopping is False:  # Hugging Face's guess: ranked at its length now.
      return t + 1
    if self.length_penalty > 0:  # The best a running beam can do: end as long as allowed.
      return self.max_length
    return t + 2                 # ... end as soon as possible, one token on.


def _start(beams, state, log_probs):
  """The loop's first carry: each article's one row copied to K, only the first live.

  The carry is (t, alive (B, K, T), alive_scores (B, K), finished (B, K, T),
  finished_scores (B, K), finished_lengths (B, K), done (B,), log_probs
  (R, V), state).
  """
  batch, k, max_length = beams.batch, beams.k, beams.max_length
  log_probs = jnp.repeat(log_probs, k, axis=0)                 # (R, V), row b*K+j
  # Only the first copy starts live: the others would repeat its extensions.
  alive_scores = jnp.tile(jnp.array([0.0] + [-jnp.inf] * (k - 1), jnp.float32),
                          (batch, 1))                          # (B, K)
  alive = jnp.zeros((batch, k, max_length), jnp.int32)
  finished = jnp.zeros((batch, k, max_length), jnp.int32)
  finished_scores = jnp.full((batch, k), -jnp.inf, jnp.float32)
  finished_lengths = jnp.zeros((batch, k), jnp.int32)
  done = jnp.zeros((batch,), bool)
  return (jnp.int32(0), alive, alive_scores, finished, finished_scores,
          finished_lengths, done, log_probs, state)


def _advance(beams, step, reorder, carry):
  """One step of every article's beams: extend, finish the EOS ones, go on with K."""
  (t, alive, alive_scores, finished, finished_scores, finished_lengths, done,
   log_probs, state) = carry
  batch, k, vocab_size = beams.batch, beams.k, beams.vocab_size
  allowed = constrain(log_probs, alive.reshape(beams.rows, beams.max_length), t,
                      beams.min_length, beams.no_repeat_ngram_size)  # (R, V)
  extended = alive_scores[..., None] + allowed.reshape(batch, k, vocab_size)
  scores, index = lax.top_k(extended.reshape(batch, k * vocab_size), 2 * k)  # (B, 2K)
  beam, tokens = index // vocab_size, (index % vocab_size).astype(jnp.int32)
  seqs = jnp.take_along_axis(alive, beam[..., None], axis=1)  # (B, 2K, T)
  seqs = seqs.at[:, :, t].set(tokens)
  ends = tokens == EOS
  # Finished: the EOS extensions of articles not yet done, with the best so far.
  ending = jnp.where(ends & ~done[:, None],
                     _normalised(scores, t + 1, beams.length_penalty), -jnp.inf)
  finished, finished_scores, finished_lengths = _keep_best(
      jnp.concatenate([finished, seqs], axis=1),
      jnp.concatenate([finished_scores, ending], axis=1),
      jnp.concatenate([finished_lengths, jnp.full_like(tokens, t + 1)], axis=1), k)
  # Running: the best K other extensions, their rows' caches moved with them.
  alive_scores, keep = lax.top_k(jnp.where(ends, -jnp.inf, scores), k)  # (B, K)
  alive = jnp.take_along_axis(seqs, keep[..., None], axis=1)            # (B, K, T)
  source = jnp.take_along_axis(beam, keep, axis=1)                     # (B, K)
  next_tokens = jnp.take_along_axis(tokens, keep, axis=1)    # (B, K)
  log_probs, state = step(next_tokens, reorder(state, source))
  log_probs = log_probs.reshape(beams.rows, vocab_size)
  best_possible = _normalised(alive_scores.max(axis=1), beams.bound_length(t),
                              beams.length_penalty)
  if beams.early_stopping is True:
    best_possible = jnp.full_like(best_possible, -jnp.inf)
  done = done | (finished_scores.min(axis=1) >= best_possible)
  return (t + 1, alive, alive_scores, finished, finished_scores, finished_lengths,
          done, log_probs, state)


def expand_rows(state, k):
  """Copies one article's row to k rows (its beams): (1*H, C, Dh) -> (K*H, C, Dh)."""
  return jax.tree_util.tree_map(
      lambda s: jnp.tile(s, (k,) + (1,) * (s.ndim - 1)) if s.ndim else s, state)


def reorder_rows(state, source):
  """Row j of the article's new state is its row ``source[j]`` (K,)."""
  def gather(s):
    if not s.ndim:  # A position counter: the same for every beam.
      return s
    beams = s.reshape((source.shape[0], -1) + s.shape[1:])   # (K, H, C, Dh)
    return beams[source].reshape(s.shape)                   # (K*H, C, Dh)
  return jax.tree_util.tree_map(gather, state)
