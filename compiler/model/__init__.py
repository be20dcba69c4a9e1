"""The model: the records that flow between the stages and out to writers and delivery.

No module here runs a stage or imports one (``compiler/layers_test.py``); the stages
(:mod:`compiler.plan`) make these records, the writers (:mod:`compiler.emit`) and
delivery steps (:mod:`compiler.deliver`) read them.

* :mod:`compiler.model.plan` — :class:`BuildPlan` (what one build works on) and
  :class:`ClusterTarget` (a project cluster as a build sees it);
* :mod:`compiler.model.objects` — :class:`RenderedObject`, :class:`TrainJobSummary`,
  :class:`AdmittedOutput`: what the render makes;
* :mod:`compiler.model.build` — :class:`Build`, what a chain has found about one plan
  (each stage says which of its fields it reads and adds), and :data:`Stage`;
* :mod:`compiler.model.check` — :class:`CheckResult`, the rule names;
* :mod:`compiler.model.parts` — a build put together from chunks: :class:`PartBuild`,
  its :class:`ObjectFile`\\ s (objects kept as blobs) and :class:`JobSummary`\\ s.
"""
