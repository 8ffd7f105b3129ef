"""deploy/k8s, checked without a cluster: kinds and apiVersions, probes on real routes and ports, every
container command a real CLI command whose options parse, resources, non-root; the official schemas
(kubernetes-validate) and `kubectl kustomize` when installed."""
from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from tests.integration.deploy_support import (
    K8S,
    cli_accepts,
    assert_get_route,
    _flower_has_route,
    manifests,
    by,
    pod_specs,
)


KNOWN = {
    "Namespace": "v1", "ConfigMap": "v1", "Secret": "v1", "Service": "v1",
    "Deployment": "apps/v1", "Job": "batch/v1", "PodDisruptionBudget": "policy/v1",
    "HorizontalPodAutoscaler": "autoscaling/v2",
}


def test_k8s_kinds_api_versions_and_kustomization() -> None:
    docs = manifests()
    for d in docs:
        assert KNOWN.get(d["kind"]) == d["apiVersion"], (d["kind"], d["apiVersion"])
        assert d["metadata"]["name"]
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert set(kust["resources"]) == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(by("Deployment")) == {"palimpsest-api", "palimpsest-worker", "palimpsest-graph-worker",
                                     "palimpsest-beat", "palimpsest-flower"}
    assert set(by("Job")) == {"palimpsest-migrate"}
    for single in ("palimpsest-beat", "palimpsest-graph-worker"):  # exactly one, also during a rollout
        spec = by("Deployment")[single]["spec"]
        assert spec["replicas"] == 1 and spec["strategy"]["type"] == "Recreate", single
    assert not any(h["spec"]["scaleTargetRef"]["name"] == "palimpsest-graph-worker"
                   for h in by("HorizontalPodAutoscaler").values())
    hpa = by("HorizontalPodAutoscaler")["palimpsest-worker"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == "palimpsest-worker" and hpa["maxReplicas"] > hpa["minReplicas"] >= 1


def test_k8s_containers_run_real_commands_as_non_root_with_resources() -> None:
    roles = {}
    config_names = set(by("ConfigMap")) | set(by("Secret"))
    for name, tpl in pod_specs().items():
        spec = tpl["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] != 0
        for c in spec["containers"]:
            assert c["image"] == "palimpsest"  # kustomize sets the tag (images:)
            command = c.get("command", ["palimpsest"])
            assert command == ["palimpsest"], (name, command)
            cli_accepts(c["args"])
            roles[name] = c["args"][0]
            req = c["resources"]["requests"]
            assert req.get("cpu") and req.get("memory"), name
            assert c["resources"]["limits"].get("memory"), name
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
            for ref in c.get("envFrom", []):
                target = (ref.get("configMapRef") or ref.get("secretRef"))["name"]
                assert target in config_names, f"{name}: envFrom {target} is not defined"
            if sc.get("readOnlyRootFilesystem"):
                mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
                assert {"/tmp", "/var/lib/palimpsest"} <= mounts, name
    assert roles == {"palimpsest-api": "serve", "palimpsest-worker": "worker", "palimpsest-graph-worker": "worker",
                     "palimpsest-beat": "beat", "palimpsest-flower": "flower", "palimpsest-migrate": "migrate"}
    args = {name: tpl["spec"]["containers"][0]["args"] for name, tpl in pod_specs().items()}
    assert args["palimpsest-worker"][:3] == ["worker", "--role", "main"]  # the graph's tasks: not here
    assert args["palimpsest-graph-worker"] == ["worker", "--role", "graph"]  # one process
    secret = by("Secret")["palimpsest-secrets"]["stringData"]
    assert {"DATABASE_URL", "REDIS_URL", "PALIMPSEST_BOOTSTRAP_API_KEY"} <= set(secret)


def test_k8s_probes_hit_real_routes_and_ports() -> None:
    pods = pod_specs()
    api = pods["palimpsest-api"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in api["ports"]}
    assert ports == {"http": 8000}
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = api[probe]["httpGet"]
        assert get["port"] in ports
        assert_get_route(get["path"])
    worker = pods["palimpsest-worker"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        assert "inspect ping" in " ".join(worker[probe]["exec"]["command"])
    graph = pods["palimpsest-graph-worker"]["spec"]["containers"][0]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert "inspect ping -d graph@$HOSTNAME" in " ".join(graph[probe]["exec"]["command"])
    flower = pods["palimpsest-flower"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe"):
        assert _flower_has_route(flower[probe]["httpGet"]["path"])
    # each Service selects its pods and targets a named container port
    for name, svc in by("Service").items():
        tpl = pods[name]
        labels = tpl["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), name
        names = {p["name"] for c in tpl["spec"]["containers"] for p in c.get("ports", [])}
        assert {p["targetPort"] for p in svc["spec"]["ports"]} <= names, name
    for name, d in by("Deployment").items():
        sel = d["spec"]["selector"]["matchLabels"]
        assert all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in sel.items()), name


def test_k8s_official_schemas() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate for the schema check")
    for d in manifests():
        kv.validate(d, "1.30.0", strict=True)  # raises on an unknown or mistyped field


def test_kustomize_build() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    r = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    assert len(docs) == len(manifests())
    assert all(d["metadata"].get("namespace") == "palimpsest" for d in docs if d["kind"] != "Namespace")
    images = {c["image"] for d in docs if d["kind"] in ("Deployment", "Job")
              for c in d["spec"]["template"]["spec"]["containers"]}
    assert images == {"palimpsest:0.1.0"}
