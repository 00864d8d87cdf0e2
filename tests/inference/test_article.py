"""An article as the model reads it: cleaned as the training articles were."""

from summarizer import text
from summarizer.inference import article
from summarizer.inference import loaded_model
from summarizer.inference import summaries

from conftest import ARTICLES


def test_clean_article_drops_what_training_articles_never_have():
  assert article.clean_article('  One.\r\n\r\nTwo.\rThree.\n\n') == 'One.\n\nTwo.\nThree.'


def test_a_final_newline_does_not_reach_the_model(random_model_dir, monkeypatch):
  tokenized, tokenize = [], text.tokenize

  def recording_tokenize(article_text, vocab_file=None):
    tokenized.append(article_text)
    return tokenize(article_text, vocab_file)

  monkeypatch.setattr(text, 'tokenize', recording_tokenize)
  loaded = loaded_model.load(random_model_dir)
  summarized = [list(summaries.summarize_tokens(ARTICLES[0] + end, loaded, 4))
                for end in ('', '\n', '\r\n')]
  assert tokenized == [ARTICLES[0]] * 3
  assert summarized[0] == summarized[1] == summarized[2]
