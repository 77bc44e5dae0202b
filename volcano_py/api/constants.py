"""Well-known names shared with Volcano: API groups, kinds, labels, annotations, condition types, queue names.

Everything that reads or writes these keys imports them from here, so a pod created by our Job controller is
recognised by Volcano's tools and a Volcano user's annotations mean the same thing to our scheduler. The
spellings are Volcano's (``pkg/apis/*/labels.go`` and the plugins that read annotations); keep them exact.
"""

from __future__ import annotations

from typing import Final

# --- API groups, versions, kinds, plurals --------------------------------------------------------------

BATCH_GROUP: Final = "batch.volcano.sh"
BATCH_VERSION: Final = "v1alpha1"
BATCH_API_VERSION: Final = f"{BATCH_GROUP}/{BATCH_VERSION}"

SCHEDULING_GROUP: Final = "scheduling.volcano.sh"
SCHEDULING_VERSION: Final = "v1beta1"
SCHEDULING_API_VERSION: Final = f"{SCHEDULING_GROUP}/{SCHEDULING_VERSION}"

BUS_GROUP: Final = "bus.volcano.sh"
BUS_VERSION: Final = "v1alpha1"
BUS_API_VERSION: Final = f"{BUS_GROUP}/{BUS_VERSION}"

TOPOLOGY_GROUP: Final = "topology.volcano.sh"
TOPOLOGY_VERSION: Final = "v1alpha1"
TOPOLOGY_API_VERSION: Final = f"{TOPOLOGY_GROUP}/{TOPOLOGY_VERSION}"

FLOW_GROUP: Final = "flow.volcano.sh"
FLOW_VERSION: Final = "v1alpha1"
FLOW_API_VERSION: Final = f"{FLOW_GROUP}/{FLOW_VERSION}"

JOB_KIND: Final = "Job"
JOB_PLURAL: Final = "jobs"
PODGROUP_KIND: Final = "PodGroup"
PODGROUP_PLURAL: Final = "podgroups"
QUEUE_KIND: Final = "Queue"
QUEUE_PLURAL: Final = "queues"
COMMAND_KIND: Final = "Command"
COMMAND_PLURAL: Final = "commands"
HYPERNODE_KIND: Final = "HyperNode"
HYPERNODE_PLURAL: Final = "hypernodes"
CRONJOB_KIND: Final = "CronJob"
CRONJOB_PLURAL: Final = "cronjobs"
JOBFLOW_KIND: Final = "JobFlow"
JOBFLOW_PLURAL: Final = "jobflows"
JOBTEMPLATE_KIND: Final = "JobTemplate"
JOBTEMPLATE_PLURAL: Final = "jobtemplates"

NODEINFO_GROUP: Final = "nodeinfo.volcano.sh"
NODEINFO_VERSION: Final = "v1alpha1"
NODEINFO_API_VERSION: Final = f"{NODEINFO_GROUP}/{NODEINFO_VERSION}"
NUMATOPOLOGY_KIND: Final = "Numatopology"
NUMATOPOLOGY_PLURAL: Final = "numatopologies"

SHARD_GROUP: Final = "shard.volcano.sh"
SHARD_VERSION: Final = "v1alpha1"
SHARD_API_VERSION: Final = f"{SHARD_GROUP}/{SHARD_VERSION}"
NODESHARD_KIND: Final = "NodeShard"
NODESHARD_PLURAL: Final = "nodeshards"

# Every kind Volcano serves, by apiVersion (its CRDs). ``volcano-py validate`` checks the ones we model
# (``validation.KINDS``), reports the others as not checked, and refuses any other kind in these groups.
VOLCANO_KINDS: Final[dict[str, tuple[str, ...]]] = {
    BATCH_API_VERSION: (JOB_KIND, CRONJOB_KIND),
    SCHEDULING_API_VERSION: (PODGROUP_KIND, QUEUE_KIND),
    BUS_API_VERSION: (COMMAND_KIND,),
    TOPOLOGY_API_VERSION: (HYPERNODE_KIND,),
    FLOW_API_VERSION: (JOBFLOW_KIND, JOBTEMPLATE_KIND),
    NODEINFO_API_VERSION: (NUMATOPOLOGY_KIND,),
    SHARD_API_VERSION: (NODESHARD_KIND,),
    "config.volcano.sh/v1alpha1": ("ColocationConfiguration",),
}

# The name under which pods ask for us (``spec.schedulerName``); Volcano's default.
SCHEDULER_NAME: Final = "volcano"
# Volcano's agent scheduler (latency-bound pods, one by one): its schedulerName, NodeShard and Lease.
AGENT_SCHEDULER_NAME: Final = "agent-scheduler"

# --- batch.volcano.sh/v1alpha1 (pods and PodGroups created for a Job) --------------------------------------

TASK_SPEC_KEY: Final = "volcano.sh/task-spec"  # annotation + label: the task (spec) name of a pod
TASK_INDEX_KEY: Final = "volcano.sh/task-index"  # annotation + label: the pod's index within its task
JOB_NAME_KEY: Final = "volcano.sh/job-name"
JOB_NAMESPACE_KEY: Final = "volcano.sh/job-namespace"
QUEUE_NAME_KEY: Final = "volcano.sh/queue-name"
TASK_PARTITION_ID_KEY: Final = "volcano.sh/partition-id"
JOB_VERSION_KEY: Final = "volcano.sh/job-version"  # annotation: Job status.version the pod was created at
JOB_TYPE_KEY: Final = "volcano.sh/job-type"
JOB_RETRY_COUNT_KEY: Final = "volcano.sh/job-retry-count"
POD_TEMPLATE_KEY: Final = "volcano.sh/template-uid"  # equivalence class of pods built from one template
JOB_FORWARDING_KEY: Final = "volcano.sh/job-forwarding"
FORWARD_CLUSTER_KEY: Final = "volcano.sh/forward-cluster"
CRONJOB_SCHEDULED_TIMESTAMP_KEY: Final = "volcano.sh/cronjob-scheduled-timestamp"
# Set on a Job by the controller when it must re-sync (e.g. after a pod changed behind its back).
CONTROLLER_OUT_OF_SYNC_KEY: Final = "volcano.sh/controller-out-of-sync"

DEFAULT_TASK_SPEC: Final = "default"
PODGROUP_NAME_PREFIX: Final = "podgroup-"

# --- scheduling.volcano.sh/v1beta1 (PodGroup / Queue / pod annotations read by the scheduler) --------------

ANNOTATION_PREFIX: Final = "volcano.sh/"
KUBE_GROUP_NAME_KEY: Final = "scheduling.k8s.io/group-name"  # pod annotation: the PodGroup it belongs to
VOLCANO_GROUP_NAME_KEY: Final = f"{SCHEDULING_GROUP}/group-name"
VOLCANO_GROUP_MIN_MEMBER_KEY: Final = f"{SCHEDULING_GROUP}/group-min-member"
VOLCANO_GROUP_MIN_RESOURCES_KEY: Final = f"{SCHEDULING_GROUP}/group-min-resources"
QUEUE_NAME_ANNOTATION_KEY: Final = f"{SCHEDULING_GROUP}/queue-name"
QUEUE_ALLOCATION_GATE_KEY: Final = f"{SCHEDULING_GROUP}/queue-allocation-gate"
JOB_WAITING_TIME_KEY: Final = "volcano.sh/sla-waiting-time"
HIERARCHY_KEY: Final = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_KEY: Final = "volcano.sh/hierarchy-weights"
PREEMPTABLE_KEY: Final = "volcano.sh/preemptable"
COOLDOWN_TIME_KEY: Final = "volcano.sh/cooldown-time"
# Queue annotation written by this scheduler: its decayed recent usage (see api/recent_usage.py).
RECENT_USAGE_KEY: Final = "volcano-py.io/recent-usage"
# How long a job's pods are expected to run once started (a Go duration), on a pod, a PodGroup or a Volcano
# Job (its PodGroup carries it): read by the position-and-ETA forecast and a fifo queue's backfill
# (docs/queues.md, api/runtimes.py), never enforced.
EXPECTED_RUNTIME_KEY: Final = "volcano-py.io/expected-runtime"
# Owners whose pods serve until deleted rather than run to completion: the forecast expects no end of theirs.
SERVING_OWNER_KINDS: Final = frozenset({"ReplicaSet", "StatefulSet", "DaemonSet", "ReplicationController"})
REVOCABLE_ZONE_KEY: Final = "volcano.sh/revocable-zone"
NODE_GROUP_NAME_KEY: Final = "volcano.sh/nodegroup-name"  # node label read by the nodegroup plugin
NODE_GROUP_RESOURCE_LIMITS_KEY: Final = "volcano.sh/nodegroup-resource-limits"  # queue annotation
JDB_MIN_AVAILABLE_KEY: Final = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE_KEY: Final = "volcano.sh/jdb-max-unavailable"
NUMA_POLICY_KEY: Final = "volcano.sh/numa-topology-policy"
TOPOLOGY_DECISION_KEY: Final = "volcano.sh/topology-decision"
QOS_LEVEL_KEY: Final = "volcano.sh/qos-level"
# Pod annotation naming its resource group (volcano-admission.conf, groups without an object.key).
RESOURCE_GROUP_ANNOTATION_KEY: Final = "volcano.sh/resource-group"

# task-topology plugin: read from Job / PodGroup annotations.
TASK_TOPOLOGY_KEY: Final = "volcano.sh/task-topology"
TASK_TOPOLOGY_AFFINITY_KEY: Final = "volcano.sh/task-topology-affinity"
TASK_TOPOLOGY_ANTI_AFFINITY_KEY: Final = "volcano.sh/task-topology-anti-affinity"
TASK_TOPOLOGY_TASK_ORDER_KEY: Final = "volcano.sh/task-topology-task-order"

# --- topology.volcano.sh/v1alpha1 ---------------------------------------------------------------------------

NETWORK_TOPOLOGY_MODE_KEY: Final = "volcano.sh/network-topology-mode"
NETWORK_TOPOLOGY_HIGHEST_TIER_KEY: Final = "volcano.sh/network-topology-highest-tier"
# HyperNode label: which discovery source made it (``label``, ``ufm``); discovery owns only its own.
NETWORK_TOPOLOGY_SOURCE_KEY: Final = "volcano.sh/network-topology-source"

# --- flow.volcano.sh/v1alpha1 -------------------------------------------------------------------------------

# Label and annotation on a Job made by a JobFlow: "<namespace>.<name>" of the template and of the flow.
CREATED_BY_JOB_TEMPLATE_KEY: Final = "volcano.sh/createdByJobTemplate"
CREATED_BY_JOB_FLOW_KEY: Final = "volcano.sh/createdByJobFlow"

# --- the controller's own configuration (Volcano's chart) --------------------------------------------------

VOLCANO_SYSTEM_NAMESPACE: Final = "volcano-system"
CONTROLLER_CONFIGMAP: Final = "volcano-controller-configmap"
CONTROLLER_CONFIG_KEY: Final = "volcano-controller.conf"

# --- shard.volcano.sh/v1alpha1 (NodeShards, written by the sharding controller) ---------------------------

# The sharding controller's ConfigMap (Volcano's ``--sharding-configmap`` default) and its YAML's key.
SHARDING_CONFIGMAP: Final = "volcano-sharding-configmap"
SHARDING_CONFIG_KEY: Final = "sharding.yaml"
# Node label the ``warmup`` policy prefers by default, and the value that marks a warm node.
WARMUP_LABEL_KEY: Final = "node.volcano.sh/warmup"
WARMUP_LABEL_VALUE: Final = "true"
# Kubernetes' annotation on the API's copy of a static pod: the sharding controller leaves those out of a
# node's utilisation, as Volcano's does.
MIRROR_POD_ANNOTATION_KEY: Final = "kubernetes.io/config.mirror"

# --- devices: GPU sharing (deviceshare plugin, Volcano's gpushare and HAMi vGPU device plugins) ----------

# GPU sharing by memory: a node reports its total GPU memory (MiB, all cards) and its card count in
# ``status.capacity``; a pod asks for ``gpu-memory`` (MiB on one card) or ``gpu-number`` (whole idle cards)
# in its limits.
GPU_MEMORY_RESOURCE: Final = "volcano.sh/gpu-memory"
GPU_NUMBER_RESOURCE: Final = "volcano.sh/gpu-number"
# Pod annotations the scheduler writes at bind: the chosen card indices ("0" or "0,1") and when it chose.
GPU_INDEX_KEY: Final = "volcano.sh/gpu-index"
PREDICATE_TIME_KEY: Final = "volcano.sh/predicate-time"
# Node annotation: comma-separated indices of cards the device plugin found unhealthy.
GPU_UNHEALTHY_IDS_KEY: Final = "volcano.sh/gpu-unhealthy-ids"

# vGPU (HAMi): per container, how many cards, and per card memory (MiB, or percent of the card) and cores (%).
VGPU_NUMBER_RESOURCE: Final = "volcano.sh/vgpu-number"
VGPU_MEMORY_RESOURCE: Final = "volcano.sh/vgpu-memory"
VGPU_MEMORY_PERCENTAGE_RESOURCE: Final = "volcano.sh/vgpu-memory-percentage"
VGPU_CORES_RESOURCE: Final = "volcano.sh/vgpu-cores"
# Node annotation the vGPU device plugin writes: one "uuid,split count,memory MiB,type,healthy,mode" per card,
# cards separated by ':'.
VGPU_NODE_REGISTER_KEY: Final = "volcano.sh/node-vgpu-register"
# Pod annotations written at bind: per container "uuid,type,memory,cores:" per card, containers by ';'.
VGPU_IDS_KEY: Final = "volcano.sh/vgpu-ids-new"
VGPU_DEVICES_TO_ALLOCATE_KEY: Final = "volcano.sh/devices-to-allocate"
VGPU_NODE_KEY: Final = "volcano.sh/vgpu-node"
VGPU_TIME_KEY: Final = "volcano.sh/vgpu-time"
VGPU_BIND_TIME_KEY: Final = "volcano.sh/bind-time"
VGPU_BIND_PHASE_KEY: Final = "volcano.sh/bind-phase"
VGPU_BIND_PHASE_ALLOCATING: Final = "allocating"
# Pod annotations choosing cards by type ("A100,V100"): only these, or none of these.
VGPU_USE_TYPE_KEY: Final = "nvidia.com/use-gputype"
VGPU_NOUSE_TYPE_KEY: Final = "nvidia.com/nouse-gputype"
# The percentage resource means "a share of whichever card"; no node advertises it, it is never node capacity.
DEVICE_ONLY_RESOURCES: Final = frozenset({VGPU_MEMORY_PERCENTAGE_RESOURCE})
# The deviceshare plugin's SchedulePolicy values.
DEVICE_POLICY_BINPACK: Final = "binpack"
DEVICE_POLICY_SPREAD: Final = "spread"

# --- numa-aware (nodeinfo.volcano.sh Numatopology) ---------------------------------------------------------

# Numatopology ``spec.policies`` keys and the CPU manager policy the plugin needs; the task policy values are
# ``batch.NumaPolicy`` (a Job task's ``topologyPolicy``, copied to this pod annotation: ``NUMA_POLICY_KEY``).
CPU_MANAGER_POLICY: Final = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY: Final = "TopologyManagerPolicy"
CPU_MANAGER_STATIC: Final = "static"

# --- queues -------------------------------------------------------------------------------------------------

DEFAULT_QUEUE: Final = "default"
ROOT_QUEUE: Final = "root"

# --- PodGroup conditions ------------------------------------------------------------------------------------

PODGROUP_CONDITION_UNSCHEDULABLE: Final = "Unschedulable"
PODGROUP_CONDITION_SCHEDULED: Final = "Scheduled"
PODGROUP_READY_MESSAGE: Final = "pod group is ready"
PODGROUP_NOT_READY_MESSAGE: Final = "pod group is not ready"
REASON_POD_FAILED: Final = "PodFailed"
REASON_POD_DELETED: Final = "PodDeleted"
REASON_NOT_ENOUGH_RESOURCES: Final = "NotEnoughResources"
REASON_NOT_ENOUGH_PODS: Final = "NotEnoughTasks"
REASON_NOT_ENOUGH_PODS_OF_TASK: Final = "NotEnoughPodsOfTask"
# The reasons for which a gang waits for its pods to exist, not for room.
REASONS_PODS_MISSING: Final = frozenset({REASON_NOT_ENOUGH_PODS, REASON_NOT_ENOUGH_PODS_OF_TASK})
