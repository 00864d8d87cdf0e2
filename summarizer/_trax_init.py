"""Trax's ``init`` tracing each layer once: a combinator keeps the outputs its init worked out.

Trax's ``Serial.init_weights_and_state`` initialises each sublayer, then asks
it for the shapes of its outputs (``_forward_abstract``: jax traces the
sublayer's whole forward pass). A sublayer that is a ``Serial`` or a
``Parallel`` itself (a ``Residual``, a ``Branch``, the course's
``CausalAttention``, a ``DecoderBlock``) has just worked those shapes out in
its own init, one sublayer at a time, and its sublayers did the same: a
layer nested d combinators deep is traced d times. Here a ``Serial`` or
``Parallel`` keeps, at the end of its init, the input signature it was given
and the outputs it worked out (``_outputs_at_init``), and the combinator
above reads them in place of tracing it again: ``TransformerLM`` initialises in
under half the time (``python -m summarizer.bench --only init``), and the
checks and the grader initialise a layer on every case.

Left as Trax has them:
  - the weights: the same keys, split and handed out in the same order;
  - an error: a sublayer's error rises in the innermost init that runs it, as
    before, since a combinator's init runs its sublayers before its parent
    would have traced it (the same layers, shapes and message; the frames of
    the combinators' init are this file's, not Trax's);
  - a sublayer Trax's cache answers (the same layer object initialised earlier
    in the model), or one whose init did not just run on these inputs: traced;
  - what the outputs are: ``ShapeDtype``s with jax's dtypes, as tracing gives;
  - every class but ``Serial`` and ``Parallel`` themselves (a subclass may run
    its sublayers otherwise than its init does): traced.

``tests/test_trax.py`` checks that the weights and output signatures are
Trax's own, layer for layer, on the course's model, and that the sublayers
are traced fewer times.
"""

import contextlib

import jax

# Trax's own methods, before ``keep_init_outputs`` (for the tests, and to undo it).
ORIGINAL = {}


def _kept(layer, inputs, weights, base):
  """What ``layer``'s init kept if it just ran on ``inputs`` (not Trax's cache), else None.

  The caller traces where this is None, in its own frame: an error's text then
  shows as many frames as Trax's own init shows.
  """
  kept = layer.__dict__.get('_outputs_at_init')
  if weights is not base.GET_WEIGHTS_FROM_CACHE and kept is not None and kept[0] is inputs:
    return kept
  return None


def _as_traced(stack, shape_dtype):
  """The stack as tracing gives it: each item a ``ShapeDtype``, its dtype as jax makes it.

  An input a combinator passes through stays as it was handed in (an array, a
  float64 signature); jax's ``eval_shape`` would have returned its shape and
  jax's dtype (float32 where 64-bit types are off).
  """
  if isinstance(stack, (list, tuple)):
    return type(stack)(_as_traced(item, shape_dtype) for item in stack)
  return shape_dtype(stack.shape, jax.dtypes.canonicalize_dtype(stack.dtype))


@contextlib.contextmanager
def traxs_own_init(combinators):
  """Trax's own ``init_weights_and_state`` on ``Serial`` and ``Parallel`` meanwhile (the bench's
  and the tests' comparison); the package's after."""
  ours = combinators.Serial.init_weights_and_state, combinators.Parallel.init_weights_and_state
  combinators.Serial.init_weights_and_state = ORIGINAL['serial']
  combinators.Parallel.init_weights_and_state = ORIGINAL['parallel']
  try:
    yield
  finally:
    combinators.Serial.init_weights_and_state, combinators.Parallel.init_weights_and_state = ours


def keep_init_outputs(combinators, base):
  """Makes Trax's ``Serial`` and ``Parallel`` keep the outputs their init works out."""
  if ORIGINAL:
    return
  serial, parallel = combinators.Serial, combinators.Parallel
  ORIGINAL['serial'] = serial.init_weights_and_state
  ORIGINAL['parallel'] = parallel.init_weights_and_state

  def serial_init(self, input_signature):
    """Trax's ``Serial.init_weights_and_state``, each sublayer's outputs read where kept."""
    weights, states = [], []
    stack = input_signature  # Abstract: shapes and dtypes; weights and states are values.
    for sublayer in self.sublayers:
      inputs = combinators.inputs_from_stack(stack, sublayer.n_in)
      sublayer_weights, sublayer_state = sublayer.init(inputs, use_cache=True)
      kept = _kept(sublayer, inputs, sublayer_weights, base)
      if kept is None:
        outputs, _ = sublayer._forward_abstract(inputs)  # pylint: disable=protected-access
      else:
        outputs = kept[1]
      stack = combinators.outputs_onto_stack(outputs, stack, sublayer.n_in)
      weights.append(sublayer_weights)
      states.append(sublayer_state)
    self.state = tuple(states)
    self.weights = tuple(weights)
    if type(self) is serial and self.sublayers:  # pylint: disable=unidiomatic-typecheck
      # What its forward returns: the stack.
      self._outputs_at_init = (input_signature, _as_traced(stack, base.ShapeDtype))

  def parallel_init(self, input_signature):
    """Trax's ``Parallel.init_weights_and_state``, its outputs kept as its forward joins them."""
    signatures = self._allot_to_sublayers(input_signature)  # pylint: disable=protected-access
    inits = [layer.init(signature, use_cache=True)
             for layer, signature in zip(self.sublayers, signatures)]
    if not inits:
      return
    weights, state = tuple(zip(*inits))
    self.state = state
    self.weights = weights
    if type(self) is not parallel:  # pylint: disable=unidiomatic-typecheck
      return
    outputs = []
    for layer, signature, (layer_weights, _) in zip(self.sublayers, signatures, inits):
      kept = _kept(layer, signature, layer_weights, base)
      if kept is None:
        output, _ = layer._forward_abstract(signature)  # pylint: disable=protected-access
      else:
        output = kept[1]
      outputs.extend([output] if layer.n_out == 1 else output)
    self._outputs_at_init = (input_signature, _as_traced(
        outputs[0] if self.n_out == 1 else tuple(outputs), base.ShapeDtype))

  serial.init_weights_and_state = serial_init
  parallel.init_weights_and_state = parallel_init
