"""The Job controller reads a Job through ``volcano_py.api.job_view.resolve_job``; these two names remain for
``volcano_py.whatif``, which imports them from here, until it imports the api module itself."""

from volcano_py.api.job_view import JobSpecError
from volcano_py.api.job_view import resolve_job as parse_job

__all__ = ["JobSpecError", "parse_job"]
