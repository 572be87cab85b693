"""Studies: each one a module of this package holding its pipelines, its tables and
figures as functions of a run, the paper's claims with the check that judges each, and
the paper (:class:`~dolb.studies.study.Study`), all in the registry :data:`STUDIES`.

``dolb study NAME RUN`` prints a study's tables and its claims' verdicts and writes its
table records and figures (:mod:`dolb.studies.command`); the documentation renders its
page from them (:mod:`dolb.studies.pages`). Another package adds a study by declaring,
in its ``pyproject.toml``::

    [project.entry-points."dolb.studies"]
    my_study = "my_package.my_study"

where ``my_package.my_study`` calls ``STUDIES.add(study.name, study)`` (see the guide
page "Your own study").

Examples
--------
>>> import dolb
>>> "irma" in dolb.STUDIES and dolb.STUDIES["irma"].pipelines
('irma',)
"""

from __future__ import annotations

from dolb.registry import Registry
from dolb.studies.study import Claim, Figure, ResultRun, Study, Table, Verdict, report_figure

OWN = ("cutoff_averaging", "irma", "linear_zoo", "oms", "online_mr", "tuning")
"""dolb's own studies, each the module of its name in this package, whose pages are in
dolb's ``docs/``."""
STUDIES: Registry[Study] = Registry("study", entry_point_group="dolb.studies",
                                    modules=tuple(f"dolb.studies.{name}" for name in OWN))
"""Every study by name: dolb's own (their modules imported when it is first read) and
those of the ``dolb.studies`` entry points."""

__all__ = ["OWN", "STUDIES", "Claim", "Figure", "ResultRun", "Study", "Table", "Verdict", "report_figure"]
