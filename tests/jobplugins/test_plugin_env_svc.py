"""env and svc: index env, hostnames, the hosts ConfigMap, headless Service and NetworkPolicy."""

from __future__ import annotations

from plugin_builders import env_of, fixed_keys, make_job, make_pod

from volcano_py.api import constants
from volcano_py.jobplugins import ApplyPolicy, ObjectRef, build_plugins


def test_env_sets_both_task_index_variables_in_every_container_and_init_container() -> None:
    job = make_job().task("worker", 3, containers=2, init=1).plugin("env").obj()
    pod = make_pod(job, "worker", 2)
    build_plugins(job).on_pod_create(job, pod, "worker", 2)
    for container in [*pod["spec"]["containers"], *pod["spec"]["initContainers"]]:
        assert env_of(container) == {"VK_TASK_INDEX": "2", "VC_TASK_INDEX": "2"}


def test_env_creates_no_objects() -> None:
    job = make_job().task("worker", 1).plugin("env").obj()
    assert build_plugins(job).on_job_add(job) == []
    assert build_plugins(job).on_job_delete(job) == []


def test_svc_sets_hostname_subdomain_env_and_mount() -> None:
    job = make_job("tf").task("ps", 1).task("worker-a", 2).plugin("svc").obj()
    pod = make_pod(job, "worker-a", 1)
    build_plugins(job).on_pod_create(job, pod, "worker-a", 1)
    assert pod["spec"]["hostname"] == "tf-worker-a-1"
    assert pod["spec"]["subdomain"] == "tf"
    env = env_of(pod["spec"]["containers"][0])
    assert env["VC_WORKER_A_HOSTS"] == {"configMapKeyRef": {"name": "tf-svc", "key": "VC_WORKER_A_HOSTS"}}
    assert set(env) == {"VC_PS_HOSTS", "VC_PS_NUM", "VC_WORKER_A_HOSTS", "VC_WORKER_A_NUM"}
    assert pod["spec"]["volumes"] == [{"name": "tf-svc", "configMap": {"name": "tf-svc"}}]
    assert pod["spec"]["containers"][0]["volumeMounts"] == [{"name": "tf-svc", "mountPath": "/etc/volcano"}]


def test_svc_keeps_a_hostname_the_template_sets() -> None:
    job = make_job("j").task("m", 1, hostname="launcher", subdomain="net").plugin("svc").obj()
    pod = make_pod(job, "m", 0)
    build_plugins(job).on_pod_create(job, pod, "m", 0)
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("launcher", "net")
    cm = build_plugins(job).on_job_add(job)[0].body
    assert cm["data"]["m.host"] == "launcher.net"


def test_svc_without_host_env_still_mounts_the_hosts_file() -> None:
    job = make_job().task("worker", 2).plugin("svc", "--inject-hosts-env=false").obj()
    pod = make_pod(job, "worker", 0)
    build_plugins(job).on_pod_create(job, pod, "worker", 0)
    assert "env" not in pod["spec"]["containers"][0]
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] == "/etc/volcano"


def test_svc_objects_hosts_configmap_headless_service_and_network_policy() -> None:
    job = make_job("mpi1", "team").task("master", 1).task("worker-x", 3).plugin("svc").obj()
    objects = build_plugins(job).on_job_add(job)
    assert [(o.body["kind"], o.body["metadata"]["name"], o.policy) for o in objects] == [
        ("ConfigMap", "mpi1-svc", ApplyPolicy.REPLACE),
        ("Service", "mpi1", ApplyPolicy.CREATE),
        ("NetworkPolicy", "mpi1", ApplyPolicy.CREATE),
    ]
    cm, svc, netpol = (o.body for o in objects)
    assert cm["data"] == {
        "master.host": "mpi1-master-0.mpi1",
        "VC_MASTER_HOSTS": "mpi1-master-0.mpi1",
        "VC_MASTER_NUM": "1",
        "worker_x.host": "mpi1-worker-x-0.mpi1\nmpi1-worker-x-1.mpi1\nmpi1-worker-x-2.mpi1",
        "VC_WORKER_X_HOSTS": "mpi1-worker-x-0.mpi1,mpi1-worker-x-1.mpi1,mpi1-worker-x-2.mpi1",
        "VC_WORKER_X_NUM": "3",
    }
    selector = {constants.JOB_NAME_KEY: "mpi1", constants.JOB_NAMESPACE_KEY: "team"}
    assert svc["spec"] == {"clusterIP": "None", "selector": selector, "publishNotReadyAddresses": False}
    assert netpol["spec"]["podSelector"] == {"matchLabels": selector}
    assert netpol["spec"]["ingress"] == [{"from": [{"podSelector": {"matchLabels": selector}}]}]
    for body in (cm, svc, netpol):
        assert body["metadata"]["namespace"] == "team"
        assert body["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "mpi1",
                "uid": "uid-mpi1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]


def test_svc_flags_publish_not_ready_and_disable_network_policy() -> None:
    job = (
        make_job("j")
        .task("w", 1)
        .plugin("svc", "--publish-not-ready-addresses", "--disable-network-policy=true")
        .obj()
    )
    plugins = build_plugins(job)
    kinds = [o.body["kind"] for o in plugins.on_job_add(job)]
    assert kinds == ["ConfigMap", "Service"]
    assert plugins.on_job_add(job)[1].body["spec"]["publishNotReadyAddresses"] is True
    assert plugins.on_job_delete(job) == [
        ObjectRef("v1", "ConfigMap", "ns1", "j-svc"),
        ObjectRef("v1", "Service", "ns1", "j"),
    ]


def test_svc_hosts_follow_a_scale_up() -> None:
    small = make_job("j").task("w", 1).plugin("svc").obj()
    big = make_job("j").task("w", 3).plugin("svc").obj()
    assert build_plugins(small).on_job_add(small)[0].body["data"]["VC_W_NUM"] == "1"
    assert build_plugins(big).on_job_add(big)[0].body["data"]["VC_W_NUM"] == "3"


def test_on_job_add_is_idempotent_for_a_restart() -> None:
    job = make_job("j").task("w", 2).plugin("svc").plugin("env").obj()
    plugins = build_plugins(job)
    assert [o.body for o in plugins.on_job_add(job)] == [o.body for o in plugins.on_job_add(job)]
    assert plugins.controlled_resources() == {"plugin-env": "env", "plugin-svc": "svc"}


def test_the_same_job_and_index_always_give_the_same_pod() -> None:
    job = make_job("j").task("w", 2).plugin("svc").plugin("env").obj()
    once, twice = make_pod(job, "w", 1), make_pod(job, "w", 1)
    build_plugins(job).on_pod_create(job, once, "w", 1)
    build_plugins(job).on_pod_create(job, twice, "w", 1)
    assert once == twice


def test_svc_hosts_follow_a_scale_down_through_the_update_hook() -> None:
    # Volcano's jobp e2e "Scale down": 2 -> 1 replicas, the hosts file lists one host; 0 lists none.
    def hosts(replicas: int) -> dict[str, str]:
        job = make_job("j").task("w", replicas).plugin("svc").obj()
        (config_map,) = build_plugins(job).on_job_update(job)
        assert config_map.policy is ApplyPolicy.REPLACE and config_map.ref.name == "j-svc"
        data: dict[str, str] = config_map.body["data"]
        return data

    assert hosts(2) == {"w.host": "j-w-0.j\nj-w-1.j", "VC_W_HOSTS": "j-w-0.j,j-w-1.j", "VC_W_NUM": "2"}
    assert hosts(1) == {"w.host": "j-w-0.j", "VC_W_HOSTS": "j-w-0.j", "VC_W_NUM": "1"}
    assert hosts(0) == {"w.host": "", "VC_W_HOSTS": "", "VC_W_NUM": "0"}


def test_only_plugins_with_an_update_hook_answer_a_job_update() -> None:
    keys_made: list[int] = []

    def keygen() -> tuple[bytes, bytes]:
        keys_made.append(1)
        return fixed_keys()

    job = make_job("j").task("master", 1).task("worker", 2).plugin("mpi").plugin("ssh").plugin("svc").obj()
    plugins = build_plugins(job, ssh_keygen=keygen)
    assert [obj.ref.name for obj in plugins.on_job_update(job)] == ["j-svc"]
    assert keys_made == []  # the Secret is never rewritten, so no key pair is made for it
