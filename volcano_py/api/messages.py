"""Volcano's refusal texts, the one text of Volcano's we reproduce: users' scripts, CI and Volcano's own e2e
suites match on them. Every refusal that Volcano also makes starts with Volcano's words, verbatim, and goes on
with ours (the field named, the fix): ``volcano_said(VOLCANO_X.format(...), "what to change")``.

One table for every admission path (Job, PodGroup, Queue, Pod, HyperNode, JobFlow, JobTemplate, CronJob), so a
text is written once and a test can check each is used.
"""

from __future__ import annotations

from typing import Final

__all__ = ["volcano_said"]


def volcano_said(volcano: str, ours: str) -> str:
    """Volcano's words first (what scripts match), then ours; ``ours`` empty when Volcano's say it all,
    ``volcano`` empty where Volcano makes no such refusal on this path."""
    return "; ".join(part for part in (volcano, ours) if part)


# --- Job, PodGroup, Queue, Pod and HyperNode admission ------------------------------------------------------
# (each entry: NAME: Final = "Volcano's text, with {placeholders} where Volcano formats values")

# Job (its validating webhook and ValidatingAdmissionPolicy).
VOLCANO_NO_TASK: Final = "No task specified in job spec"
VOLCANO_DUPLICATED_TASK_NAME: Final = "duplicated task name {task}"
VOLCANO_TASK_MIN_AVAILABLE: Final = "'minAvailable' is greater than 'replicas' in task: {task}, job: {job}"
VOLCANO_JOB_MIN_AVAILABLE: Final = "job 'minAvailable' should not be greater than total replicas in tasks"
VOLCANO_MPI_MASTER: Final = "The specified mpi master task was not found"
VOLCANO_UNKNOWN_PLUGIN: Final = "unable to find job plugin: {plugin}"
VOLCANO_POD_NAME: Final = "create pod with name {pod} validate failed"
VOLCANO_JOB_NAME: Final = "create job with name {job} validate failed"
VOLCANO_CPU_NOT_INTEGER: Final = (
    "the cpu request isn't an integer in spec.task[{task}] container[{container}]"
)
VOLCANO_PARTITION_REPLICAS: Final = (
    "'Replicas' are not equal to TotalPartitions*PartitionSize in task: {task}, job: {job}"
)
VOLCANO_PARTITION_MIN_AVAILABLE: Final = (
    "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: {task}, job: {job}"
)
VOLCANO_TIER_BOTH: Final = (
    "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"
)
VOLCANO_NOT_DAG: Final = "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)"
VOLCANO_ROOT_QUEUE_JOB: Final = "can not submit job to root queue"
VOLCANO_JOB_QUEUE_MISSING: Final = 'unable to find job queue: queue.scheduling.volcano.sh "{queue}" not found'
VOLCANO_JOB_QUEUE_NOT_OPEN: Final = (
    "can only submit job to queue with state `Open`, queue `{queue}` status is `{state}`"
)
VOLCANO_JOB_LEAF_QUEUE: Final = "can only submit job to leaf queue, queue `{queue}` has {count} child queues"
VOLCANO_UPDATE_TASKS: Final = "job updates may not add or remove tasks"
VOLCANO_UPDATE_FIELDS: Final = (
    "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and "
    "`PriorityClassName`"
)
# Lifecycle policies.
VOLCANO_EVENT_AND_EXIT_CODE: Final = "must not specify event and exitCode simultaneously"
VOLCANO_NO_EVENT_OR_EXIT_CODE: Final = "either event and exitCode should be specified"
VOLCANO_INVALID_EVENT: Final = "invalid policy event"
VOLCANO_INVALID_ACTION: Final = "invalid policy action"
VOLCANO_DUPLICATE_EVENT: Final = "duplicate policy event found"
VOLCANO_EXIT_CODE_ZERO: Final = "0 is not a valid error code"
VOLCANO_DUPLICATE_EXIT_CODE: Final = "duplicate exitCode {code}"
VOLCANO_ANY_EVENT_ALONE: Final = "if there's * here, no other policy should be here"
# Volumes.
VOLCANO_DUPLICATED_MOUNT_PATH: Final = "duplicated mountPath: {path}"
VOLCANO_NO_CLAIM: Final = "either VolumeClaim or VolumeClaimName must be specified"
VOLCANO_BOTH_CLAIMS: Final = (
    "conflict: If you want to use an existing PVC, just specify VolumeClaimName."
    "If you want to create a new PVC, you do not need to specify VolumeClaimName"
)
VOLCANO_CLAIM_NAME: Final = "invalid VolumeClaimName {name}"

# PodGroup.
VOLCANO_PODGROUP_QUEUE_MISSING: Final = (
    'unable to find queue: queue.scheduling.volcano.sh "{queue}" not found'
)
VOLCANO_PODGROUP_QUEUE_NOT_OPEN: Final = (
    "can only submit PodGroup to queue with state `Open`, queue `{queue}` status is `{state}`"
)
VOLCANO_SUBGROUP_TIER_BOTH: Final = (
    "in subGroupPolicy '{policy}': must not specify 'highestTierAllowed' and 'highestTierName' in "
    "networkTopology simultaneously"
)

# Queue.
VOLCANO_DESERVED_MISSING: Final = "deserved[{resource}] must be >= guarantee[{resource}]={guarantee}"
VOLCANO_DESERVED_BELOW_GUARANTEE: Final = (
    "deserved[{resource}]={deserved} must be >= guarantee[{resource}]={guarantee}"
)
VOLCANO_DESERVED_ABOVE_CAPABILITY: Final = (
    "deserved[{resource}]={deserved} must be <= capability[{resource}]={capability}"
)
VOLCANO_HIERARCHY_LENGTH: Final = (
    "volcano.sh/hierarchy must have the same length with volcano.sh/hierarchy-weights"
)
VOLCANO_HIERARCHY_WEIGHT_NUMBER: Final = "{weight} in the {weights} is invalid number"
VOLCANO_HIERARCHY_WEIGHT_POSITIVE: Final = "{weight} in the {weights} must be larger than 0"
VOLCANO_HIERARCHY_SUB_PATH: Final = (
    "{hierarchy} is not allowed to be in the sub path of {theirs} of queue {queue}"
)
VOLCANO_OWN_PARENT: Final = "queue {queue} cannot use itself as parent"
VOLCANO_PARENT_MISSING: Final = (
    'parent queue {parent} not found: queue.scheduling.volcano.sh "{parent}" not found'
)
VOLCANO_QUEUE_DEPTH: Final = "queue {queue} exceeds the maximum allowed depth of {depth}"
VOLCANO_PARENT_HAS_PODS: Final = (
    "queue {parent} cannot be the parent queue of queue {queue} because it has allocated Pods: {pods}"
)
VOLCANO_ANCESTOR_CAPABILITY: Final = (
    "queue {queue} capability[{resource}]={value} exceeds its ancestor's capability={limit}"
)
VOLCANO_DESCENDANT_CAPABILITY: Final = (
    "queue {queue} capability[{resource}]={value} is smaller than its descendants' max capability={child}"
)
VOLCANO_SIBLINGS_SUM: Final = "parent queue {parent} validation failed: sum of children's {field}"
VOLCANO_CHILDREN_SUM: Final = "queue {parent} validation failed: sum of children's {field}"
VOLCANO_ROOT_QUEUE_RESOURCES: Final = (
    "root queue's resource attributes (capability, deserved, guarantee) cannot be modified"
)
VOLCANO_QUEUE_UNDELETABLE: Final = "`{queue}` queue can not be deleted"
VOLCANO_QUEUE_HAS_CHILDREN: Final = (
    "queue {queue} can not be deleted because it has {count} child queues: {children}"
)

# Pod (the job disruption budget annotations); {value} is Go's %q of the value (quoted).
VOLCANO_JDB_BOTH: Final = "not allow configure multiple annotations <[{keys}]> at same time"
VOLCANO_JDB_NOT_POSITIVE: Final = "invalid value <{value}> for {key}, it must be a positive integer"
VOLCANO_JDB_PERCENTAGE: Final = (
    "invalid value <{value}> for {key}, it must be a valid percentage which between 1% ~ 99%"
)
VOLCANO_JDB_NOT_NUMBER: Final = 'invalid value strconv.Atoi: parsing "{digits}": {reason} for {key}'

# HyperNode.
VOLCANO_HYPERNODE_NO_MEMBERS: Final = "member must have at least one member"
VOLCANO_HYPERNODE_REGEX: Final = "member regexMatch pattern is invalid"
VOLCANO_HYPERNODE_NO_SELECTOR: Final = (
    "member selector must have one of exactMatch, regexMatch, or labelMatch"
)
VOLCANO_HYPERNODE_SELECTORS: Final = (
    "cannot specify more than one selector type (exactMatch, regexMatch, labelMatch)"
)


# --- JobFlow, JobTemplate and CronJob admission -------------------------------------------------------------
# (same form)
# Volcano refuses no JobTemplate: it has no JobTemplate webhook.

# JobFlow (Volcano's jobflows webhook: the flow must be a DAG over its own step names).
VOLCANO_FLOW_NOT_DAG: Final = "jobflow Flow is not DAG"
VOLCANO_FLOW_VERTEX_NOT_DEFINED: Final = "jobflow Flow is not DAG: vertex is not defined: {vertex}"

# CronJob (Volcano's cronjobs webhook: schedule, timeZone, name).
VOLCANO_CRON_SCHEDULE_EMPTY: Final = "schedule is required, but got empty"
VOLCANO_CRON_SCHEDULE_TZ: Final = (
    "schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field"
)
VOLCANO_CRON_SCHEDULE_INVALID: Final = "schedule is not a valid cron expression"
VOLCANO_CRON_TIMEZONE_EMPTY: Final = "timeZone must be nil or non-empty string, got empty string"
# Said once per '/'-separated part that is not a plausible zone name part.
VOLCANO_CRON_TIMEZONE_UNKNOWN: Final = "unknown timeZone"
VOLCANO_CRON_TIMEZONE_LOCAL: Final = (
    "timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"
)
VOLCANO_CRON_TIMEZONE_INVALID: Final = "invalid timeZone"
VOLCANO_CRON_NAME_TOO_LONG: Final = (
    "cronJob name must be no more than {max_base} characters to accommodate job name suffix "
    "(max {max_total} total)"
)

# --- Scheduler conf (volcano-scheduler.conf, as Volcano's scheduler loads it) -------------------------------
# {action} is the entry between commas as written, before Volcano trims it.
VOLCANO_SCHEDULER_UNKNOWN_ACTION: Final = "failed to find Action {action}"

# --- Sharding config (``sharding.yaml`` in the sharding ConfigMap, as Volcano's controller loads it) --------
# Volcano prefixes each with "schedulerConfigs[i] (name): " and the policy's place; our path names the field.
VOLCANO_SHARDING_UNMARSHAL: Final = "failed to unmarshal sharding config"
VOLCANO_SHARDING_NO_SCHEDULERS: Final = "sharding config must contain at least one schedulerConfig entry"
VOLCANO_SHARDING_NAME_EMPTY: Final = "name must not be empty"
VOLCANO_SHARDING_UTIL_RANGE: Final = "{field} {value:.2f} out of range [0,1]"
VOLCANO_SHARDING_UTIL_ORDER: Final = "cpuUtilizationMin ({low:.2f}) must be <= cpuUtilizationMax ({high:.2f})"
VOLCANO_SHARDING_MIN_NODES: Final = "minNodes must be >= 0"
VOLCANO_SHARDING_MAX_NODES: Final = "maxNodes ({high}) must be >= minNodes ({low})"
VOLCANO_SHARDING_POLICY_NAME_EMPTY: Final = "policies[{index}].name must not be empty"
VOLCANO_SHARDING_WEIGHT: Final = "weight must be >= 0 (omit for default of 1)"
VOLCANO_SHARDING_NODE_LIMIT_ONLY: Final = "{field} is only supported by the node-limit policy"
VOLCANO_SHARDING_POLICY_NOT_FOUND: Final = "policy {policy} not found"
VOLCANO_SHARDING_CPU_RANGE: Final = (
    "invalid CPU utilization range [{low:.2f}, {high:.2f}]: must be within [0.0, 1.0] and min <= max"
)
VOLCANO_SHARDING_NODE_LIMIT_MIN: Final = "invalid minNodes {low}: must be >= 0"
VOLCANO_SHARDING_NODE_LIMIT_BOUNDS: Final = "invalid bounds [{low}, {high}]: maxNodes must be >= minNodes"
VOLCANO_SHARDING_WARMUP_LABEL: Final = "warmupLabel cannot be empty"
