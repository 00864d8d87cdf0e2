"""Reading an article: cleaned as the training articles were."""

from summarizer import text
from summarizer.inference import articles
from summarizer.inference import reading
from summarizer.inference import summaries

from conftest import ARTICLES


def test_clean_article_drops_what_training_articles_never_have():
  assert reading.clean_article('  One.\r\n\r\nTwo.\rThree.\n\n') == 'One.\n\nTwo.\nThree.'


def test_a_final_newline_does_not_reach_the_model(random_model_dir, monkeypatch):
  tokenized, tokenize = [], text.tokenize

  def recording_tokenize(article, vocab_file=None):
    tokenized.append(article)
    return tokenize(article, vocab_file)

  monkeypatch.setattr(articles, 'tokenize', recording_tokenize)
  summarized = [list(summaries.summarize_tokens(ARTICLES[0] + end, random_model_dir, 4))
                for end in ('', '\n', '\r\n')]
  assert tokenized == [ARTICLES[0]] * 3
  assert summarized[0] == summarized[1] == summarized[2]
