"""A prepared run: its tasks weigh and cut as the preset says."""

import dataclasses

import pytest

from summarizer import train as train_command
from summarizer.runs import loop as run_loop
from summarizer.runs import run_dir

from conftest import micro_args


def test_evaluation_weighs_the_summary_only(tmp_path):
  # With a zero learning rate both runs keep their (same) initial weights:
  # the article's weight in training must not change the eval metric.
  losses = [run_loop.train(micro_args(tmp_path / str(weight), max_steps=2, learning_rate=0.0,
                                      article_loss_weight=weight))['eval_loss']
            for weight in (0.0, 1.0)]
  assert losses[0] == pytest.approx(losses[1], rel=1e-6)


def test_the_course_preset_drops_over_long_examples_and_tiny_cuts_them():
  course, tiny = micro_args('x', preset='course'), micro_args('x', preset='tiny')
  assert run_dir.resolve_config(course).truncate is False  # The course's FilterByLength.
  assert run_dir.resolve_config(tiny).truncate is True
  assert run_dir.resolve_config(dataclasses.replace(course, truncate=True)).truncate is True
  assert train_command.parse_args(['--no-truncate']).truncate is False
  assert train_command.parse_args([]).truncate is None  # The preset decides.
