"""Beam search and the constraints: against exhaustive search on a tiny model."""

import itertools
import json

import numpy as np
import pytest

from summarizer._trax import tl, trax
from summarizer.config import EOS
from summarizer.errors import SummarizerError
from summarizer.inference import api
from summarizer.inference import beam
from summarizer.inference import layout
from summarizer.inference import loaded_model
from summarizer.inference import fast_decoder
from summarizer.inference import summaries
from summarizer.model import TransformerLM

TINY = dict(vocab_size=4, d_model=8, d_ff=16, n_layers=1, n_heads=2, dropout=0.0,
            max_len=32)
PREFIXES = [[2, 3, 2, EOS, 0], [3, 3, 2, 2, 3, 2, EOS, 0]]


@pytest.fixture(scope='module')
def tiny():
  """A tiny random model: its eval-mode self and its fast decoder."""
  model = TransformerLM(**TINY, mode='eval')
  model.init(trax.shapes.ShapeDtype((1, 1), np.int32), rng=trax.fastmath.random.get_prng(3))
  # Sharper than a fresh init's near-uniform outputs, so scores differ clearly.
  weights = [np.asarray(w) * 4.0 for w in tl.flatten_weights_and_state(
      model.weights, ())[0]]
  layout.set_weights(model, weights)
  predict = TransformerLM(**TINY, mode='predict')
  layout.set_weights(predict, weights)
  return model, fast_decoder.FastDecoder(predict, TINY['max_len'])


def exhaustive(model, prefix, max_length, search):
  """Scores every summary of at most ``max_length`` tokens; returns [(score, ids)]."""
  vocab = TINY['vocab_size']
  candidates = []
  for length in range(1, max_length + 1):
    for ids in itertools.product(range(vocab), repeat=length):
      if EOS in ids[:-1] or (length < max_length and ids[-1] != EOS):
        continue  # EOS ends a summary; only the longest may end without it.
      candidates.append(list(ids))
  joint = np.zeros((len(candidates), len(prefix) + max_length), np.int32)
  for row, ids in enumerate(candidates):
    joint[row, :len(prefix) + len(ids)] = prefix + ids
  log_probs = np.asarray(model((joint, joint))[0])             # (N, L, V)
  scored = []
  for row, ids in enumerate(candidates):
    allowed = True
    total = 0.0
    for t, token in enumerate(ids):
      if token == EOS and t < search.min_length:
        allowed = False
      n = search.no_repeat_ngram_size
      if n and t + 1 >= n:
        grams = [tuple(ids[i:i + n]) for i in range(t + 2 - n)]
        allowed &= grams.count(grams[-1]) == 1
      total += log_probs[row, len(prefix) + t, token]
    if allowed:
      scored.append((total / len(ids) ** search.length_penalty, ids))
  return sorted(scored, key=lambda pair: -pair[0])


SEARCHES = [beam.Search(length_penalty=0.0),
            beam.Search(length_penalty=2.0, min_length=2),
            beam.Search(length_penalty=-0.5, no_repeat_ngram_size=1),
            beam.Search(length_penalty=1.0, no_repeat_ngram_size=2)]


@pytest.mark.parametrize('search', SEARCHES, ids=str)
@pytest.mark.slow
def test_enough_beams_find_the_exhaustive_best_and_fewer_never_beat_it(tiny, search):
  model, decoder = tiny
  max_length = 4 if search.no_repeat_ngram_size == 2 else 3
  for prefix in PREFIXES:
    ranked = exhaustive(model, prefix, max_length, search)
    best_score, best_ids = ranked[0]
    assert best_score - ranked[1][0] > 1e-4  # No tie to blur the comparison.
    scores_of = {tuple(ids): score for score, ids in ranked}
    for num_beams in (TINY['vocab_size'] ** max_length, 2, 1):
      wide = beam.Search(num_beams, search.length_penalty, search.no_repeat_ngram_size,
                         search.min_length, early_stopping='never')
      started, _ = decoder.start(prefix, max_length=max_length)
      (ids,), (score,) = decoder.decode_rows(started, max_length, wide, with_scores=True)
      assert tuple(ids) in scores_of, (wide, ids)  # A summary the search allows...
      assert score == pytest.approx(scores_of[tuple(ids)], abs=1e-4)  # ... scored right.
      if num_beams == TINY['vocab_size'] ** max_length:
        assert ids == best_ids
      assert score <= best_score + 1e-4


def test_one_beam_without_constraints_is_greedy(tiny):
  _, decoder = tiny
  for prefix in PREFIXES:
    greedy = list(decoder.resume(decoder.start(prefix)[0], 12))
    (one_beam,) = decoder.decode_rows(decoder.start(prefix)[0], 12,
                                      beam.Search(1, length_penalty=0.0))
    # The beam loop itself, with one beam (decode_rows takes it for 2 or more).
    sized = decoder._at(TINY['max_len'])  # pylint: disable=protected-access
    started, _ = decoder.start(prefix)
    tokens, lengths, _ = sized.beam_loop(sized.weights, started.log_probs, started.state,
                                         1, 12, 0.0, 0, 0, 'never')
    assert one_beam == greedy
    # One beam follows the greedy path, but (as Hugging Face's beam search)
    # keeps an EOS that was second best at some step as a finished summary,
    # which may outscore the longer greedy one: greedy cut short, then EOS.
    looped = np.asarray(tokens)[0, :int(lengths[0])].tolist()
    assert looped == greedy or (looped[-1] == EOS and greedy[:len(looped) - 1] == looped[:-1])


@pytest.mark.parametrize('early_stopping', [True, False, 'never'])
def test_each_way_of_stopping_finds_a_real_summary_and_never_beats_exact(tiny, early_stopping):
  # Stopping earlier can only miss better summaries: never find a better one.
  _, decoder = tiny
  for prefix in PREFIXES:
    scores = {}
    for stop in (early_stopping, 'never'):
      search = beam.Search(3, 2.0, early_stopping=stop)
      started, _ = decoder.start(prefix, max_length=8)
      (ids,), (scores[stop],) = decoder.decode_rows(started, 8, search, with_scores=True)
      assert ids and (ids[-1] == EOS or len(ids) == 8)
    assert scores[early_stopping] <= scores['never'] + 1e-6


def test_constraints_hold_in_greedy_and_beam_search(tiny):
  _, decoder = tiny
  prefix = PREFIXES[0]
  plain = decoder.decode_rows(decoder.start(prefix)[0], 12)[0]
  # A random 4-token model repeats itself and ends early: the constraints bite.
  assert len(plain) < 6 or len(set(zip(plain, plain[1:]))) < len(plain) - 1
  for num_beams in (1, 3):
    search = beam.Search(num_beams, 1.0, no_repeat_ngram_size=3, min_length=6)
    (ids,) = decoder.decode_rows(decoder.start(prefix)[0], 12, search)
    body = ids[:-1] if ids[-1] == EOS else ids
    assert len(body) >= 6 and EOS not in body
    trigrams = list(zip(ids, ids[1:], ids[2:]))
    assert len(set(trigrams)) == len(trigrams), ids
    streamed = list(decoder.resume(decoder.start(prefix)[0], 12, min_length=6,
                                   no_repeat_ngram_size=3))
    if num_beams == 1:
      assert streamed == ids


def test_repeated_ngram_bans_mark_what_would_repeat():
  generated = np.array([[5, 6, 7, 5, 6, 0, 0], [5, 6, 7, 5, 6, 0, 0]], np.int32)
  bans = np.asarray(beam.repeated_ngram_bans(generated, np.int32(5), 3, 9))
  assert np.flatnonzero(bans[0]).tolist() == [7]   # 5 6 -> 7 again is banned.
  bans = np.asarray(beam.repeated_ngram_bans(generated, np.int32(3), 3, 9))
  assert not bans.any()                            # Nothing repeats yet at t=3.
  bans = np.asarray(beam.repeated_ngram_bans(generated, np.int32(5), 1, 9))
  assert np.flatnonzero(bans[0]).tolist() == [5, 6, 7]


@pytest.mark.parametrize('kwargs,fragment', [
    (dict(num_beams=0), 'num_beams must be between 1 and 64, not 0'),
    (dict(no_repeat_ngram_size=-1), 'no_repeat_ngram_size must not be negative'),
    (dict(min_length=9), 'min_length 9 is more than max_length 8'),
    (dict(num_beams=2, temperature=0.5), 'exclude each other'),
    (dict(num_beams=2, method='greedy'), "need method='fast'"),
])
def test_bad_search_settings_are_named(random_model_dir, kwargs, fragment):
  with pytest.raises(SummarizerError, match=fragment):
    api.summarize('Heavy rain closed the road.', random_model_dir, max_length=8,
                  **kwargs)


ARTICLES = [
    'Heavy rain closed the coast road on Monday, officials said.',
    'The council voted 7 to 2 to build a new bridge over the river. ' * 6,
    'Scientists said the comet would pass close to Earth in March.',
    'A fire at the old mill was put out by crews from three towns overnight. ' * 3,
    'Prices rose.',
]


@pytest.mark.parametrize('search', [beam.Search(), beam.Search(3, 2.0, 2, 4)], ids=str)
@pytest.mark.slow
def test_a_batch_gives_each_article_its_summary_alone(random_model_dir, search):
  loaded = loaded_model.load(random_model_dir)
  alone = [summaries.summarize_tokens(article, loaded, 10, search=search,
                                      stream=False) for article in ARTICLES]
  alone_ids = [list(run) for run in alone]
  batches = []
  batched = summaries.summarize_many(ARTICLES, loaded, 10, search=search,
                                     batch_size=4, on_batch=batches.append)
  assert batches == [4, 1]
  assert [list(run) for run in batched] == alone_ids
  assert len({tuple(ids) for ids in alone_ids}) > 1  # Not one answer for all.
  for one, many in zip(alone, batched):
    assert many.article_perplexity == pytest.approx(one.article_perplexity, rel=1e-5)
  if search.num_beams == 1:  # And the same as one token a call.
    assert alone_ids == [list(summaries.summarize_tokens(a, loaded, 10))
                         for a in ARTICLES]


@pytest.mark.slow
def test_beam_search_on_the_course_checkpoint(course_model_dir):
  from conftest import COURSE_SHAPED  # pylint: disable=import-outside-toplevel
  article = 'It was a sunny day when I went to the market to buy some flowers.'
  loaded = loaded_model.load(course_model_dir)
  greedy = list(summaries.summarize_tokens(article, loaded, 12))
  one_beam = summaries.summarize_tokens(article, loaded, 12,
                                        search=beam.Search(1, 0.0), stream=False)
  assert list(one_beam) == greedy
  search = beam.Search(4, 2.0, no_repeat_ngram_size=2, min_length=10)
  runs = summaries.summarize_many([article, article + ' But only roses.'],
                                  loaded, 12, search=search)
  for run in runs:
    ids = run.details() and run.ids
    assert len(ids) >= 10 and max(ids) < COURSE_SHAPED['vocab_size']
    bigrams = list(zip(ids, ids[1:]))
    assert len(set(bigrams)) == len(bigrams)
  assert runs[0].ids == list(summaries.summarize_tokens(article, loaded, 12,
                                                        search=search))


@pytest.mark.slow
def test_command_line_search_options(random_model_dir, tmp_path, capsys):
  from summarizer.__main__ import main  # pylint: disable=import-outside-toplevel
  paths = []
  for number, article in enumerate(ARTICLES[:3]):
    paths.append(tmp_path / f'{number}.txt')
    paths[-1].write_text(article, encoding='utf-8')
  options = ['--model', random_model_dir, '--max-length', '8', '--num-beams', '3',
             '--length-penalty', '2', '--no-repeat-ngram-size', '2', '--min-length', '3',
             '--json']
  assert main([*map(str, paths), *options, '--batch-size', '2']) == 0
  together = json.loads(capsys.readouterr().out)
  expected = [api.summarize(article, random_model_dir, 8, num_beams=3,
                            length_penalty=2.0, no_repeat_ngram_size=2, min_length=3)
              for article in ARTICLES[:3]]
  assert [result['summary_text'] for result in together] == expected


@pytest.mark.parametrize('argv,fragment', [
    (['--num-beams', '0'], '--num-beams: must be between 1 and 64'),
    (['--no-repeat-ngram-size', '-1'], '--no-repeat-ngram-size: must not be negative'),
    (['--min-length', '70'], '--min-length: 70 is more than --max-length 64'),
    (['--batch-size', '0'], '--batch-size: must be between 1 and 1024'),
    (['--num-beams', '2', '--stream'], '--stream needs --num-beams 1'),
])
def test_bad_search_options_are_one_line(argv, fragment, capsys):
  from summarizer.__main__ import main  # pylint: disable=import-outside-toplevel
  with pytest.raises(SystemExit) as exited:
    main(['--text', 'Rain.', *argv])
  err = capsys.readouterr().err
  assert exited.value.code == 2 and err.count('\n') == 1 and fragment in err, err


@pytest.mark.slow
def test_evaluate_records_its_search(random_model_dir, tmp_path):
  from summarizer.evaluation import scorecard  # pylint: disable=import-outside-toplevel
  results = scorecard.evaluate(random_model_dir, limit=3, max_length=6, retrieval_pool=5,
                              output_dir=str(tmp_path), batch_size=2,
                              search=beam.Search(2, 2.0, 3, 1))
  assert results['n'] == 3
  saved = json.loads((tmp_path / scorecard.RESULTS_FILE).read_text())
  assert {k: saved['settings'][k] for k in ('num_beams', 'length_penalty',
                                            'no_repeat_ngram_size', 'min_length',
                                            'batch_size')} == {
      'num_beams': 2, 'length_penalty': 2.0, 'no_repeat_ngram_size': 3,
      'min_length': 1, 'batch_size': 2}
  with pytest.raises(SummarizerError, match='batch-size must be at least 1'):
    scorecard.evaluate(random_model_dir, limit=1, batch_size=0)


@pytest.mark.parametrize('argv,fragment', [
    (['--num-beams', '0'], '--num-beams: must be between 1 and 64'),
    (['--min-length', '9', '--max-length', '8'], '--min-length: 9 is more than --max-length 8'),
    (['--batch-size', '0'], '--batch-size: must be between 1 and 1024'),
])
def test_bad_evaluate_search_options_are_one_line(argv, fragment, capsys):
  from summarizer import evaluate as evaluate_command  # pylint: disable=import-outside-toplevel
  with pytest.raises(SystemExit) as exited:
    evaluate_command.main(argv)
  err = capsys.readouterr().err
  assert exited.value.code == 2 and err.count('\n') == 1 and fragment in err, err
