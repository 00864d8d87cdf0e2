"""Evaluation: sentences, Lead-3, entities, scores, retrieval and the command."""

import json

import pytest

from summarizer import evaluate
from summarizer.errors import SummarizerError

ARTICLE = ('Mayor Tavin Orsell of Dunsworth opened 3 bridges on Monday. '
           'The cost was $4.7 million.')
REFERENCE = 'Tavin Orsell opens 3 bridges in Dunsworth.\nThey cost $4.7 million.'


def test_split_sentences_keeps_titles_initials_and_quotes_together():
  text = ('Mr. Tavin Orsell arrived at 9 a.m. on Monday. "We are ready!" he '
          'said. Dr. Ka Lin agreed? She did. The U.S. Senate met at 5 p.m. '
          '2,000 people came.\nA new line starts a sentence')
  assert evaluate.split_sentences(text) == [
      'Mr. Tavin Orsell arrived at 9 a.m. on Monday.',
      '"We are ready!" he said.',
      'Dr. Ka Lin agreed?',
      'She did.',
      'The U.S. Senate met at 5 p.m.',
      '2,000 people came.',
      'A new line starts a sentence',
  ]
  assert evaluate.split_sentences('  \n') == []


def test_lead3_is_the_first_three_sentences_one_a_line():
  text = ('Mr. Orsell spoke first. "It was wild!" she said. Roads shut at '
          '6 p.m. on Friday. Dr. Lin left. More came.')
  assert evaluate.lead3(text) == ('Mr. Orsell spoke first.\n'
                                  '"It was wild!" she said.\n'
                                  'Roads shut at 6 p.m. on Friday.')
  assert evaluate.lead3('Just one sentence') == 'Just one sentence'


def test_entities_are_names_and_numbers():
  found = evaluate.entities(
      'Officials in Port Velmara said 1,200 homes lost power on Friday. '
      "Mayor Tavin Orsell's office put the cost at $4.7 million, up 12.5% on "
      'last year, with 30 per cent of roads shut. "We thank Camor Athletic," '
      'I said. The 21st flood hit 4 towns.')
  # Sentence openers (Officials, Mayor, The) and the one after the quote
  # (We) are capitalised anyway; "I" is never a name.
  assert found == {'Port Velmara', '1,200', 'Friday', 'Tavin Orsell',
                   '4.7 million', '12.5%', '30%', 'Camor Athletic', '21st', '4'}


def test_entities_of_highlights_treat_each_line_as_a_sentence():
  assert evaluate.entities(REFERENCE) == {'Orsell', '3', 'Dunsworth', '4.7 million'}
  assert evaluate.entities('') == set()


def test_occurs_matches_whole_words_and_whole_numbers():
  text = 'Port Velmara lost 4.7 million, 60% and 14 boats.'
  assert evaluate.occurs('Velmara', text)
  assert evaluate.occurs('4.7 million', text)
  assert evaluate.occurs('60%', 'down 60 per cent')
  for entity in ('Velm', '4', '60', '1', '4.7 billion'):
    assert not evaluate.occurs(entity, text), entity


def test_entity_precision_and_recall_are_exact_fractions():
  summary = 'Mayor Tavin Orsell opened 4 bridges in Dunsworth.'
  # Summary: Tavin Orsell (in the article), 4 (not: 3 and 4.7 are), Dunsworth.
  # Reference: Orsell (in the summary), 3, Dunsworth (in it), 4.7 million.
  assert evaluate.entity_scores(summary, ARTICLE, REFERENCE) == {
      'entity_precision': 2 / 3, 'entity_recall': 2 / 4}
  assert evaluate.entity_scores('nothing to see here.', ARTICLE, REFERENCE) == {
      'entity_precision': None, 'entity_recall': 0.0}
  assert evaluate.entity_scores('x', ARTICLE, 'no names here.') == {
      'entity_precision': None, 'entity_recall': None}


def test_entity_scores_are_micro_averaged():
  summaries = ['Mayor Tavin Orsell opened 4 bridges in Dunsworth.',
               'bridges opened.']
  articles = [ARTICLE, ARTICLE]
  references = [REFERENCE, 'The bridges cost 9 million in Dunsworth.']
  scores = evaluate.score_system(summaries, articles, references)
  # The second summary has no entities: it adds nothing to precision (2/3)
  # and misses both reference entities (recall 2 of 4 + 0 of 2).
  assert scores['entity_precision'] == 2 / 3
  assert scores['entity_recall'] == 2 / 6
  assert set(scores) == set(evaluate.METRICS)


def test_rouge_of_identical_and_disjoint_texts():
  assert evaluate.rouge_scores('the cat sat', 'the cat sat') == {
      'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0}
  assert evaluate.rouge_scores('dogs bark loudly', 'the cat sat') == {
      'rouge1': 0.0, 'rouge2': 0.0, 'rougeL': 0.0}
  # Line breaks count as spaces, and stemming matches "opens" and "opened".
  assert evaluate.rouge_scores('bridge opens\ntoday', 'bridge opened today') == {
      'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0}


def test_retriever_returns_the_highlights_of_the_nearest_article():
  retriever = evaluate.Retriever([
      ('The river flooded the town after heavy rain, officials said.', 'Flood hits town.'),
      ('The striker scored twice and the club won the cup, officials said.', 'Club wins cup.'),
      ('The bank said profits rose and the shares climbed, officials said.', 'Bank profits rise.'),
  ])
  query = 'Officials said the striker scored a late goal in the cup final.'
  assert retriever.nearest_highlights(query) == 'Club wins cup.'
  assert retriever.nearest_highlights('Heavy rain: the river rose.') == 'Flood hits town.'
  assert retriever.similarities('The bank said profits rose and the shares '
                                'climbed, officials said.')[2] == pytest.approx(1.0)
  # Nothing in common with any article: the first one, by the tie rule.
  assert retriever.nearest('zebras') == 0


def test_retriever_needs_training_articles():
  with pytest.raises(SummarizerError, match='no training articles'):
    evaluate.Retriever([])


def test_table_is_aligned():
  scores = {'rouge1': 0.25, 'rouge2': 0.1, 'rougeL': 0.2,
            'entity_precision': None, 'entity_recall': 0.5}
  text = evaluate.table({'model': scores, 'lead3': scores, 'retrieval': scores, 'n': 2})
  lines = text.splitlines()
  assert lines[0].split() == ['system', *evaluate.METRICS]
  assert [line.split()[0] for line in lines[1:]] == list(evaluate.SYSTEMS)
  assert lines[1].split()[1:] == ['0.250', '0.100', '0.200', '-', '0.500']
  assert len({len(line) for line in lines}) == 1


def test_evaluate_end_to_end(random_model_dir, tmp_path):
  out = tmp_path / 'eval'
  results = evaluate.evaluate(random_model_dir, 'news', 'test', limit=3,
                              max_length=8, retrieval_pool=40,
                              output_dir=str(out))
  assert set(results) == {'model', 'lead3', 'retrieval', 'n'}
  assert results['n'] == 3
  for system in evaluate.SYSTEMS:
    assert set(results[system]) == set(evaluate.METRICS)
  assert results['lead3']['entity_precision'] == 1.0  # Copied from the article.
  predictions = (out / 'generated_predictions.txt').read_text().split('\n')
  assert len(predictions) == 4 and predictions[-1] == ''  # 3 lines.
  saved = json.loads((out / 'eval_results.json').read_text())
  assert {k: saved[k] for k in results} == results
  assert saved['data'] == 'news' and saved['split'] == 'test'
  assert saved['settings']['max_length'] == 8


def test_facts_only_scores_the_articles_cut_to_their_facts(random_model_dir, tmp_path,
                                                           monkeypatch):
  from summarizer import data, news
  summarised = []
  summarize_articles = evaluate.summarize_articles

  def recording(articles, *args):
    summarised.extend(articles)
    return summarize_articles(articles, *args)

  monkeypatch.setattr(evaluate, 'summarize_articles', recording)
  assert evaluate.main(['--model', random_model_dir, '--limit', '2', '--max-length', '4',
                        '--retrieval-pool', '20', '--output-dir', str(tmp_path),
                        '--facts-only', '--json']) == 0
  stories = [news.story('test', i) for i in range(2)]
  for article, story in zip(summarised, stories):
    assert len(article) < len(story.article) / 2
    assert set(data.sentences(article)) < set(data.sentences(story.article))
  saved = json.loads((tmp_path / 'eval_results.json').read_text())
  assert saved['settings']['facts_only'] is True and len(summarised) == 2


def test_main_json_prints_one_object_only(random_model_dir, tmp_path, capsys):
  assert evaluate.main(['--model', random_model_dir, '--limit', '2',
                        '--max-length', '4', '--retrieval-pool', '20',
                        '--output-dir', str(tmp_path), '--json']) == 0
  captured = capsys.readouterr()
  results = json.loads(captured.out)
  assert set(results) == {'model', 'lead3', 'retrieval', 'n'} and results['n'] == 2
  assert 'summarising' in captured.err  # Progress goes to standard error.


def test_main_prints_the_table(random_model_dir, tmp_path, capsys):
  assert evaluate.main(['--model', random_model_dir, '--split', 'validation',
                        '--limit', '1', '--max-length', '2', '--retrieval-pool',
                        '5', '--output-dir', str(tmp_path)]) == 0
  lines = capsys.readouterr().out.splitlines()
  assert lines[0].split() == ['system', *evaluate.METRICS]
  assert lines[-1].startswith('1 articles;')


@pytest.mark.parametrize('argv,fragment', [
    (['--split', 'nope'], 'unknown split'),
    (['--data', 'nowhere:x'], 'unknown data source'),
    (['--limit', '0'], 'limit must be at least 1'),
    (['--limit', '-2'], 'limit must be at least 1'),
    (['--retrieval-pool', '0'], 'retrieval-pool must be at least 1'),
    (['--model', '/nonexistent/model'], 'model directory not found'),
])
def test_bad_input_is_one_line_and_status_2(random_model_dir, tmp_path, capsys,
                                            argv, fragment):
  assert evaluate.main(['--model', random_model_dir, '--output-dir',
                        str(tmp_path), *argv]) == 2
  captured = capsys.readouterr()
  assert captured.out == ''
  assert captured.err.startswith('error: ') and captured.err.count('\n') == 1
  assert fragment in captured.err


@pytest.mark.parametrize('argv', [['--limit', 'ten'], ['--method', 'slow']])
def test_bad_arguments_exit_2_with_one_line(argv, capsys):
  with pytest.raises(SystemExit) as exit_info:
    evaluate.main(argv)
  assert exit_info.value.code == 2
  assert capsys.readouterr().err.count('\n') == 1
