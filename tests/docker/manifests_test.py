#!/usr/bin/python3
"""Checks docker/: compose.yaml and every docker/k8s/*.yaml parse as YAML and
have the structure deployment relies on (DESIGN.md 7, issue 7).

Usage: manifests_test.py DOCKER_DIR [NPU_BIN [SERVER_BIN]]   (exit status 0 = all checks passed)
Needs python3-yaml (Debian). No container engine or cluster is contacted. With
NPU_BIN, the load jobs' options are checked against `npu load --help`; with
SERVER_BIN, the KServe runtime's flags against `npu-server --help`.
"""
import os
import re
import subprocess
import sys
import unittest

import yaml

DOCKER_DIR = None
NPU_BIN = None
SERVER_BIN = None
GRPC_PORT = 50051


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def k8s_objects(sub=""):
    """(file name, object) for every object in every docker/k8s[/SUB]/*.yaml|yml."""
    k8s_dir = os.path.join(DOCKER_DIR, "k8s", sub)
    out = []
    for name in sorted(os.listdir(k8s_dir)):
        if name.endswith((".yaml", ".yml")):
            for doc in load_all(os.path.join(k8s_dir, name)):
                out.append((name, doc))
    return out


def only(objects, kind):
    found = [obj for _, obj in objects if obj.get("kind") == kind]
    if len(found) != 1:
        raise AssertionError(f"expected exactly one {kind}, found {len(found)}")
    return found[0]


def flag_values(args):
    """{--flag: value} of a container's `--flag=value` arguments."""
    out = {}
    for a in args:
        m = re.fullmatch(r"(--[\w-]+)=(.*)", str(a))
        if m:
            out[m.group(1)] = m.group(2)
    return out


def port_of(listen):
    return int(listen.rsplit(":", 1)[1])


def as_list(command):
    return command.split() if isinstance(command, str) else list(command)


class K8sManifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objects = k8s_objects()

    def test_every_object_has_kind_and_name(self):
        self.assertTrue(self.objects, "docker/k8s has no YAML objects")
        for name, obj in self.objects:
            with self.subTest(file=name):
                self.assertIsInstance(obj, dict, f"{name}: top level is not a mapping")
                self.assertIn("apiVersion", obj, f"{name}: no apiVersion")
                self.assertIn("kind", obj, f"{name}: no kind")
                if obj["kind"] != "Kustomization":
                    self.assertTrue(obj.get("metadata", {}).get("name"), f"{name}: no metadata.name")

    def test_kustomization_lists_existing_files(self):
        kustomizations = [obj for _, obj in self.objects if obj.get("kind") == "Kustomization"]
        for k in kustomizations:
            for resource in k.get("resources", []):
                self.assertTrue(os.path.exists(os.path.join(DOCKER_DIR, "k8s", resource)),
                                f"kustomization names missing file {resource}")

    def deployment_container(self):
        dep = only(self.objects, "Deployment")
        containers = dep["spec"]["template"]["spec"]["containers"]
        self.assertEqual(len(containers), 1, "Deployment: expected one container")
        return dep, containers[0]

    def test_deployment_replicas_and_selector(self):
        dep, _ = self.deployment_container()
        self.assertGreaterEqual(dep["spec"]["replicas"], 2, "Deployment: replicas < 2")
        selector = dep["spec"]["selector"]["matchLabels"]
        labels = dep["spec"]["template"]["metadata"]["labels"]
        for key, value in selector.items():
            self.assertEqual(labels.get(key), value, f"Deployment: pod labels miss selector {key}")

    def test_deployment_grpc_probes(self):
        _, c = self.deployment_container()
        for probe in ("readinessProbe", "livenessProbe"):
            with self.subTest(probe=probe):
                self.assertIn(probe, c, f"Deployment: no {probe}")
                self.assertEqual(c[probe]["grpc"]["port"], GRPC_PORT,
                                 f"Deployment: {probe}.grpc.port is not {GRPC_PORT}")
        ports = [p["containerPort"] for p in c.get("ports", [])]
        self.assertIn(GRPC_PORT, ports, "Deployment: containerPort 50051 missing")

    def test_deployment_resources_and_threads(self):
        dep, c = self.deployment_container()
        for section in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                self.assertIn(resource, c["resources"][section],
                              f"Deployment: resources.{section}.{resource} missing")
        args = " ".join(str(a) for a in c.get("args", []) + c.get("command", []))
        self.assertIn("--threads", args, "Deployment: --threads not set (size it to the CPU limit)")
        # --threads comes either from the limit itself or as the same number.
        env = {e["name"]: e for e in c.get("env", [])}
        m = re.search(r"--threads[= ](\S+)", args)
        self.assertIsNotNone(m)
        value = m.group(1)
        ref = re.fullmatch(r"\$\((\w+)\)", value)
        if ref:
            field = env[ref.group(1)]["valueFrom"]["resourceFieldRef"]
            self.assertEqual(field["resource"], "limits.cpu")
        else:
            self.assertEqual(str(value), str(c["resources"]["limits"]["cpu"]))
        grace = dep["spec"]["template"]["spec"].get("terminationGracePeriodSeconds")
        self.assertIsInstance(grace, int, "Deployment: terminationGracePeriodSeconds missing")

    def test_service_is_headless_and_selects_the_pods(self):
        svc = only(self.objects, "Service")
        dep = only(self.objects, "Deployment")
        self.assertEqual(svc["spec"].get("clusterIP"), "None", "Service: clusterIP is not None")
        labels = dep["spec"]["template"]["metadata"]["labels"]
        for key, value in svc["spec"]["selector"].items():
            self.assertEqual(labels.get(key), value, f"Service selector {key} does not match the pods")
        self.assertIn(GRPC_PORT, [p["port"] for p in svc["spec"]["ports"]])

    def test_job_loads_the_service_by_dns(self):
        job = only(self.objects, "Job")
        svc = only(self.objects, "Service")
        c = job["spec"]["template"]["spec"]["containers"][0]
        cmd = as_list(c.get("command", [])) + as_list(c.get("args", []))
        self.assertIn("load", cmd, "Job: does not run `npu load`")
        target = cmd[cmd.index("--target") + 1]
        ns = svc["metadata"].get("namespace", "default")
        self.assertEqual(target, f"dns:///{svc['metadata']['name']}.{ns}.svc.cluster.local:{GRPC_PORT}")
        self.assertIn(job["spec"]["template"]["spec"]["restartPolicy"], ("Never", "OnFailure"))


class KServeManifests(unittest.TestCase):
    """docker/k8s/kserve: npuserve as a KServe ServingRuntime and an
    InferenceService over a model repository on a volume (issue 26)."""

    @classmethod
    def setUpClass(cls):
        cls.objects = k8s_objects("kserve")
        cls.runtime = only(cls.objects, "ServingRuntime")
        cls.isvc = only(cls.objects, "InferenceService")
        cls.container = cls.runtime["spec"]["containers"][0]
        cls.flags = flag_values(cls.container.get("args", []))

    def test_kustomization_lists_every_file(self):
        k = only(self.objects, "Kustomization")
        folder = os.path.join(DOCKER_DIR, "k8s", "kserve")
        files = {n for n in os.listdir(folder) if n.endswith((".yaml", ".yml")) and n != "kustomization.yaml"}
        self.assertEqual(set(k["resources"]), files)
        for _, obj in self.objects:
            if obj["kind"] != "Kustomization":
                self.assertEqual(obj["metadata"].get("namespace"), "npu", obj["kind"])

    def test_runtime_serves_the_mounted_repository_on_kserves_ports(self):
        self.assertEqual(self.runtime["apiVersion"], "serving.kserve.io/v1alpha1")
        self.assertEqual(self.container["name"], "kserve-container")  # the name KServe looks for
        self.assertEqual(self.flags.get("--model_repository"), "/mnt/models")  # where KServe mounts storageUri
        http = port_of(self.flags["--http_listen"])
        self.assertEqual([p["containerPort"] for p in self.container["ports"]], [http])
        for probe in ("readinessProbe", "livenessProbe"):
            get = self.container[probe]["httpGet"]
            self.assertEqual(get["port"], http, probe)
            self.assertIn(get["path"], ("/v2/health/ready", "/v2/health/live"), probe)
        self.assertIn("v2", self.runtime["spec"]["protocolVersions"])
        self.assertIn("grpc-v2", self.runtime["spec"]["protocolVersions"])
        annotations = self.runtime["metadata"]["annotations"]
        self.assertEqual(int(annotations["prometheus.kserve.io/port"]), port_of(self.flags["--metrics_listen"]))
        self.assertEqual(annotations["prometheus.kserve.io/path"], "/metrics")

    def test_runtime_threads_follow_the_cpu_limit(self):
        self.assertEqual(self.flags.get("--threads"), "$(NPU_THREADS)")
        env = {e["name"]: e for e in self.container["env"]}
        field = env["NPU_THREADS"]["valueFrom"]["resourceFieldRef"]
        self.assertEqual((field["resource"], field["containerName"]), ("limits.cpu", self.container["name"]))
        self.assertEqual(self.container["resources"]["requests"], self.container["resources"]["limits"])

    def test_inference_service_uses_the_runtime_and_the_volume(self):
        predictor = self.isvc["spec"]["predictor"]
        model = predictor["model"]
        self.assertEqual(model["runtime"], self.runtime["metadata"]["name"])
        formats = [f["name"] for f in self.runtime["spec"]["supportedModelFormats"]]
        self.assertIn(model["modelFormat"]["name"], formats)
        pvc = only(self.objects, "PersistentVolumeClaim")
        self.assertEqual(model["storageUri"].rstrip("/"), f"pvc://{pvc['metadata']['name']}")
        self.assertIn(predictor["scaleMetric"], ("concurrency", "rps", "cpu", "memory"))
        self.assertLessEqual(predictor["minReplicas"], predictor["maxReplicas"])

    def test_runtime_flags_exist(self):
        if not SERVER_BIN:
            self.skipTest("no npu-server binary given")
        help_text = subprocess.run([SERVER_BIN, "--help"], capture_output=True, text=True).stdout
        help_text += subprocess.run([SERVER_BIN, "--help"], capture_output=True, text=True).stderr
        self.assertEqual(as_list(self.container["command"]), ["npu-server"])
        for flag in self.flags:
            self.assertTrue(re.search(rf"(^|\s){re.escape(flag)}\b", help_text), f"npu-server has no {flag}")


class Compose(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        docs = load_all(os.path.join(DOCKER_DIR, "compose.yaml"))
        if len(docs) != 1:
            raise AssertionError("compose.yaml: expected one YAML document")
        cls.compose = docs[0]

    def test_server_has_three_replicas(self):
        server = self.compose["services"]["npu-server"]
        self.assertEqual(server["deploy"]["replicas"], 3, "compose: npu-server replicas != 3")
        self.assertIn("healthcheck", server)

    def test_load_service_targets_the_replicas(self):
        services = self.compose["services"]
        load = services["load"]
        cmd = as_list(load.get("entrypoint", [])) + as_list(load.get("command", []))
        self.assertIn("load", cmd, "compose: load service does not run `npu load`")
        self.assertEqual(cmd[cmd.index("--target") + 1], f"dns:///npu-server:{GRPC_PORT}")
        self.assertIn("npu-server", load.get("depends_on", {}))


def load_arguments(cmd):
    """What follows `load` in a command line, the graph path included."""
    return cmd[cmd.index("load") + 1:]


class LoadJobs(unittest.TestCase):
    """The compose load service and the Kubernetes Job measure the same way."""

    @classmethod
    def setUpClass(cls):
        load = load_all(os.path.join(DOCKER_DIR, "compose.yaml"))[0]["services"]["load"]
        cls.compose = load_arguments(as_list(load.get("entrypoint", [])) + as_list(load.get("command", [])))
        c = only(k8s_objects(), "Job")["spec"]["template"]["spec"]["containers"][0]
        cls.k8s = load_arguments(as_list(c.get("command", [])) + as_list(c.get("args", [])))

    def test_same_measurement(self):
        self.assertEqual(self.compose, self.k8s)

    def test_warmed_up_windows_and_rows_a_script_can_read(self):
        for option in ("--warmup", "--stability-percentage", "--duration"):
            self.assertIn(option, self.k8s)
        self.assertEqual(self.k8s[self.k8s.index("--format") + 1], "csv")

    def test_options_exist(self):
        if not NPU_BIN:
            self.skipTest("no npu binary given")
        help_text = subprocess.run([NPU_BIN, "load", "--help"], capture_output=True, text=True, check=True).stdout
        for option in (a for a in self.k8s if a.startswith("--")):
            self.assertRegex(help_text, rf"(^|[\s,]){re.escape(option)}\b", f"`npu load` has no {option}")


class Dockerfile(unittest.TestCase):
    def test_required_instructions(self):
        with open(os.path.join(DOCKER_DIR, "Dockerfile"), encoding="utf-8") as f:
            text = f.read()
        # Join continuation lines, drop comments.
        lines = [l.strip() for l in text.replace("\\\n", " ").splitlines()]
        lines = [l for l in lines if l and not l.startswith("#")]
        instr = [l.split(None, 1)[0].upper() for l in lines]
        froms = [l for l in lines if l.upper().startswith("FROM ")]
        self.assertGreaterEqual(len(froms), 2, "Dockerfile: not multi-stage")
        for f in froms:
            self.assertIn("debian:bookworm-slim", f)
        for needed in ("EXPOSE", "HEALTHCHECK", "USER", "STOPSIGNAL", "ENTRYPOINT"):
            self.assertIn(needed, instr, f"Dockerfile: no {needed}")
        self.assertIn("EXPOSE 50051", lines)
        self.assertTrue(any("0.0.0.0:50051" in l for l in lines if l.startswith("ENTRYPOINT")))
        self.assertTrue(any("health" in l for l in lines if l.startswith("HEALTHCHECK")))

    def test_copies_every_folder_the_build_always_adds(self):
        # add_subdirectory(X) outside any if() in the top CMakeLists.txt is
        # configured in the image build too: its folder must be copied in.
        with open(os.path.join(DOCKER_DIR, "..", "CMakeLists.txt"), encoding="utf-8") as f:
            cmake = f.read()
        with open(os.path.join(DOCKER_DIR, "Dockerfile"), encoding="utf-8") as f:
            copies = {l.split()[1].rstrip("/") for l in f if l.startswith("COPY ") and "--from" not in l}
        depth, always = 0, []
        for line in cmake.splitlines():
            line = line.split("#", 1)[0].strip()
            if re.match(r"if\s*\(", line):
                depth += 1
            elif re.match(r"endif\s*\(", line):
                depth -= 1
            m = re.match(r"add_subdirectory\s*\(\s*([\w/]+)", line)
            if m and depth == 0:
                always.append(m.group(1))
        self.assertIn("protos", always)
        for folder in always:
            self.assertIn(folder, copies, f"Dockerfile: no COPY {folder}/ (CMakeLists.txt adds it)")


class RegistryHosts(unittest.TestCase):
    """No package-registry host is named in the repository: scripts read the
    mirror from apt's own configuration (docker/smoke-test.sh's apt_mirror)."""

    def apt_hosts(self):
        hosts = set()
        for folder, _, files in os.walk("/etc/apt"):
            for name in files:
                path = os.path.join(folder, name)
                if not name.endswith((".sources", ".list")):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        words = line.split()
                        uris = words[1:] if words[:1] == ["URIs:"] else []
                        if words[:1] == ["deb"] or words[:1] == ["deb-src"]:
                            uris = [w for w in words[1:] if "://" in w][:1]
                        for uri in uris:
                            host = re.sub(r"^[a-z+]+://", "", uri).split("/")[0].split(":")[0]
                            if re.fullmatch(r"[a-z0-9.-]+\.[a-z]+", host):
                                hosts.add(host)
        try:  # npm's registry, where npm is installed (bench anchors)
            npm = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True, timeout=20)
            host = re.sub(r"^[a-z+]+://", "", npm.stdout.strip()).split("/")[0].split(":")[0]
            if npm.returncode == 0 and re.fullmatch(r"[a-z0-9.-]+\.[a-z]+", host):
                hosts.add(host)
        except (OSError, subprocess.TimeoutExpired):
            pass
        return hosts

    def test_smoke_test_reads_the_mirror_from_apt(self):
        script = os.path.join(DOCKER_DIR, "smoke-test.sh")
        with open(script, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^apt_mirror\(\) \{.*?^\}", text, re.S | re.M)
        self.assertIsNotNone(m, "smoke-test.sh has no apt_mirror()")
        hosts = self.apt_hosts()
        if not hosts:
            self.skipTest("this machine's apt names no mirror")
        out = subprocess.run(["bash", "-c", m.group(0) + "\napt_mirror bookworm"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(any(h in out.stdout for h in hosts), (out.stdout, hosts))
        self.assertNotEqual(subprocess.run(["bash", "-c", m.group(0) + "\napt_mirror no-such-suite"],
                                           capture_output=True).returncode, 0)

    def test_no_registry_host_in_the_tree(self):
        repo = os.path.dirname(os.path.abspath(DOCKER_DIR))
        if not os.path.isdir(os.path.join(repo, ".git")) and not os.path.isfile(os.path.join(repo, ".git")):
            self.skipTest("not a git checkout")
        for host in sorted(self.apt_hosts()):
            out = subprocess.run(["git", "-C", repo, "grep", "-nIF", host, "--", "."], capture_output=True, text=True)
            self.assertEqual(out.stdout, "", f"a package-registry host is named in the tree:\n{out.stdout}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3, 4):
        sys.exit("usage: manifests_test.py DOCKER_DIR [NPU_BIN [SERVER_BIN]]")
    SERVER_BIN = sys.argv.pop(3) if len(sys.argv) == 4 else None
    NPU_BIN = sys.argv.pop(2) if len(sys.argv) == 3 else None
    DOCKER_DIR = sys.argv.pop(1)
    unittest.main(verbosity=2)
