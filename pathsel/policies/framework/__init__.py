"""What a policy is and how an engine runs it, apart from the policies themselves.

* :mod:`.define`: a policy written once in the compiled style (:class:`~.define.PolicyDef`: parameters,
  state, hooks, config string) and its compiled entry points;
* :mod:`.kernel`: the record ``v`` its hooks read and the toolkit they call (working set, events, draws);
* :mod:`.base`: what a Python policy sees (:class:`~.base.PathView`, :class:`~.base.DeviceView`);
* :mod:`.adapter`: a compiled policy as a Python one, as the reference engine runs it.

Nothing here imports a family (``esxi``, ``dm``, ...): the families, their shared selectors, the registry
that lists them, the spec words that name them and the shipped presets sit one folder up, in
:mod:`pathsel.policies`, and build on this.
"""
