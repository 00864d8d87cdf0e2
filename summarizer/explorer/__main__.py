"""What the model read while it wrote a summary: attention, traced facts, a page.

The explorer's own command: where names come from, measured, and the page
in headless Chromium.


  python -m summarizer.explorer --agreement 200      # where names come from, measured
  python -m summarizer.explorer --measure page.html  # size, load time in Chromium
  python -m summarizer.explorer --picture data/samples/court.txt data/explorer.png --force

An existing PNG is replaced only with ``--force``.
"""

import os
import sys

from summarizer.errors import OneLineParser, SummarizerError, run_command, user_path
from summarizer.inference.article import read_article


def parse_args(argv=None):
  p = OneLineParser(prog='python -m summarizer.explorer',
                    description=__doc__.split('\n')[0])
  what = p.add_mutually_exclusive_group(required=True)
  what.add_argument('--agreement', type=int, metavar='N',
                    help='trace the facts of the first N news test stories and print '
                         'how often attention points where string matching finds them')
  what.add_argument('--measure', type=user_path, metavar='PAGE',
                    help="print a page's size and its load and hover times in "
                         'headless Chromium')
  what.add_argument('--picture', type=user_path, nargs=2, metavar=('ARTICLE', 'PNG'),
                    help='screenshot the page of an article in headless Chromium')
  p.add_argument('--force', action='store_true', help='overwrite the PNG of --picture if it exists')
  p.add_argument('--model', type=user_path, default=None,
                 help='a model directory (default: shipped)')
  args = p.parse_args(argv)
  if args.agreement is not None and args.agreement < 1:
    p.error('argument --agreement: must be at least 1')
  # A flag the chosen work would not read is refused, not ignored.
  if args.measure and args.model is not None:
    p.error('argument --model: --measure times a page already written, with no model; '
            'leave out --model')
  if args.force and not args.picture:
    p.error('argument --force: only --picture writes a file; leave out --force')
  return args


def main(argv=None):
  args = parse_args(argv)

  def work():
    # Imported on use: --help and a bad argument need no model (nor Trax).
    from summarizer.explorer.agreement import agreement  # pylint: disable=g-import-not-at-top
    from summarizer.explorer.explanation import check_output_path  # pylint: disable=g-import-not-at-top
    from summarizer.explorer.pictures import measure_page, picture  # pylint: disable=g-import-not-at-top
    if args.measure:
      if not os.path.isfile(args.measure):
        raise SummarizerError(f'{args.measure}: no such file')
      r = measure_page(args.measure)
      print(f"{args.measure}: {r['bytes'] / 1024:.0f} KiB, {r['article_spans']} article and "
            f"{r['summary_spans']} summary tokens; loaded in {r['load_ms']:.0f} ms, "
            f"built by {r['ready_ms']:.0f} ms; shading for one token "
            f"{r['hover_ms']:.2f} ms (headless Chromium, median of 5 loads)")
      return 0
    if args.picture:
      article, png = args.picture
      if not png.lower().endswith('.png'):
        raise SummarizerError(f'{png}: --picture writes a .png')
      check_output_path(png, args.force)  # Before the model's work.
      picture(read_article(article), png, force=args.force, model_dir=args.model)
      print(f'wrote {png}', file=sys.stderr)
      return 0
    result = agreement(args.agreement, args.model)
    print(f"{result['stories']} stories, {result['facts']} names and numbers in the "
          f"summaries, {result['in_article']} found in their articles; attention "
          f"points at them for {result['agree']} ({_percent(result['share'])}, "
          'last block, mean of heads)')
    for label, share in result['by_view'].items():
      print(f'  {label}, mean of heads: {_percent(share)}')
    return 0

  return run_command(work, interrupted='stopped')


def _percent(share):
  return 'n/a' if share is None else f'{100 * share:.1f}%'


if __name__ == '__main__':
  sys.exit(main())
