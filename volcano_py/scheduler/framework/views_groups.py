"""The kept views' jobs of PodGroups, brought up to date by what changed: a new PodGroup's job takes in the
pods that were waiting for it, a replaced one's fresh twin takes its predecessor's tasks, and a gone one's
pods wait (``unowned``) for it to come back."""

from __future__ import annotations

from collections.abc import Sequence

from .job import JobInfo
from .views_diff import Obj, object_ids, renumber
from .views_state import GroupEntry, ViewsState


class GroupViews(ViewsState):
    """The PodGroups of ``views.Views``."""

    def _read_group(self, obj: Obj) -> JobInfo:
        return JobInfo.from_podgroup(obj, priority_classes=self.priorities)

    def _update_groups(self, podgroups: Sequence[Obj]) -> None:
        groups = self.groups
        ids = object_ids(podgroups)
        in_place = self._in_place(podgroups, ids, self._group_ids, groups, self._group_base)
        if in_place is not None:
            new, gone_entries = in_place
        else:
            new, gone_entries = self._groups_renumbered(podgroups)
        self._group_ids = ids
        if not new and not gone_entries:
            return
        gone: dict[str, GroupEntry] = {}
        for i, old in gone_entries.items():
            del groups[i]
            gone[old.record.uid] = old
            if self.group_of.get(old.record.uid) is old:
                del self.group_of[old.record.uid]
        self._jobs_unsorted = True
        for at, obj in new:
            record = self._read_group(obj)
            group = GroupEntry(obj, record, record.fresh(), at)
            groups[id(obj)] = group
            self.group_of[record.uid] = group
            replaced = gone.pop(record.uid, None)
            if replaced is not None:
                self._retwin_group(replaced, group)
                continue
            job = group.job
            self.jobs[job.uid] = job
            self._changed.add(job.uid)
            for task in self.unowned.pop(job.uid, {}).values():
                self._join(job, task)
        for old in gone.values():
            job = old.job
            if self.jobs.get(job.uid) is job:
                del self.jobs[job.uid]
                self._changed.add(job.uid)
                if job.tasks:
                    self.unowned[job.uid] = {id(t): t for t in job.tasks.values()}

    def _groups_renumbered(
        self, podgroups: Sequence[Obj]
    ) -> tuple[list[tuple[int, Obj]], dict[int, GroupEntry]]:
        """The new PodGroups and the gone ones, every one numbered afresh: one pass over the list."""
        groups = self.groups
        base = self._group_base = self._numbering(len(podgroups))
        # As for pods: another order would put the jobs in another order too.
        new = renumber(podgroups, groups, base)
        if not new and len(podgroups) == len(groups):
            return new, {}
        return new, {i: g for i, g in groups.items() if g.pos < base}

    def _retwin_group(self, old: GroupEntry, new: GroupEntry) -> None:
        """A fresh twin of ``new``'s record takes the place and tasks of ``old``'s (which may be ``new``)."""
        job = new.record.fresh()
        for task in old.job.tasks.values():
            self._join(job, task)
        new.job = job
        self.jobs[job.uid] = job
        self._changed.add(job.uid)
