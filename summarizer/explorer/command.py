"""The ``--explain PATH`` of ``python -m summarizer``."""

from summarizer.errors import SummarizerError
from summarizer.explorer.explanation import check_output_path, explain
from summarizer.inference import beam
from summarizer.inference.reading import cut_message


def run_explain(articles, args, out, err):
  """The ``--explain PATH`` of ``python -m summarizer``: writes the page or plot."""
  if len(articles) != 1:
    raise SummarizerError('--explain takes one article')
  check_output_path(args.explain)

  def warn_cut(kept, total):
    print(f'warning: {cut_message(kept, total)}', file=err)

  explanation = explain(articles[0][1], args.model, args.max_length, args.method,
                        args.temperature, args.top_k, args.seed, args.vocab,
                        args.n_heads, on_cut=warn_cut, search=beam.Search.from_args(args))
  explanation.save(args.explain)
  out.write(explanation.summary + '\n')
  made_up = [f.text for f in explanation.facts if not f.in_article]
  print(f'wrote {args.explain}' + (f' (not in the article: {", ".join(made_up)})'
                                   if made_up else ''), file=err)
  return 0
