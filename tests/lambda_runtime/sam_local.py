"""`sam local start-api` and `sam local invoke` of the built template, with the functions reaching AWS
services in a moto server, as a user runs them (issue 29; docs/lambda-runtime.md).

SAM puts every function container on a Docker bridge network, never the host's. So what the functions
reach runs in containers on a network of the session's own (``a2a-sam-<hex>``), where they find it by
name (a network alias); the host reaches those containers only through ports published on 127.0.0.1:

* ``a2a-sam-moto``: moto's server, the version in .venv with the extras the functions use, run by the
  Lambda image's python3.13 from a directory pip fills once (``.aws-sam/sam-local/moto-<key>``, mounted
  read-only). The template's table, queues and bucket are created in it from the template itself
  (:func:`a2a_serverless_dev.resources.create_resources`), through the published port.
* ``a2a-sam-issuer``: an OIDC issuer over HTTPS (discovery document and JWKS) for ``AuthMode=Jwt``,
  with a certificate of a CA made for these tests. The authorizer trusts that CA through an image of
  its own, the Lambda image with the CA added to the bundle httpx reads (``SSL_CERT_FILE``), given to
  SAM as ``--invoke-image AuthorizerFunction=...``: SAM passes a function only the variables its
  template declares, so no ``--env-vars`` entry could. Every other function runs on the kit's image
  (``--invoke-image a2a-serverless/lambda-python:3.13-ARCH``), never on one SAM would pull.

The functions get the endpoint and the resources' names and URLs from an ``--env-vars`` file, as a
user would write it. :class:`SamLocal` runs ``sam local invoke`` and ``sam local start-api`` with it;
:func:`sam_local` sets it all up and takes it all down (every container on the network, then the
network).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import os
import secrets
import signal
import socket
import subprocess
import textwrap
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import certifi
import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from a2a_serverless.json_types import Json, JsonValue
from a2a_serverless_dev._functions import aws_client
from a2a_serverless_dev._template import function_environment
from a2a_serverless_dev.resources import LocalResources, create_resources, load_template
from testkit.tls import ServerCertificate, server_certificate

ROOT = Path(__file__).resolve().parents[2]
SAM = ROOT / ".venv-sam" / "bin" / "sam"
REGION = "us-east-1"
CACHE = ROOT / ".aws-sam" / "sam-local"
"""What the tests build once and keep between runs (``make clean`` removes it)."""
MOTO_ALIAS = "a2a-sam-moto"
MOTO_PORT = 5000
ISSUER_ALIAS = "a2a-sam-issuer"
ISSUER = f"https://{ISSUER_ALIAS}"
AUDIENCE = "a2a-sam-local"
TEST_CA_IMAGE = "a2a-serverless/lambda-python-test-ca"
LABEL = "a2a-serverless.sam-local.recipe"
# The moto server's packages: moto with the services the functions call, and its server's web stack,
# at .venv's versions (the local stack's), so both serve the same AWS.
MOTO_PACKAGES = ("moto", "flask", "flask-cors", "werkzeug", "boto3", "botocore")
MOTO_EXTRAS = "dynamodb,dynamodbstreams,s3,sqs,ssm"
# What SAM's own process needs: credentials it hands the functions (moto takes any), no telemetry.
SAM_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "SAM_CLI_TELEMETRY": "0",
}


class Timings:
    """What each step took, for the report at the end of the session."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []
        self.started = time.monotonic()

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.steps.append((name, time.monotonic() - started))

    def summary(self) -> str:
        """The time since the start, and each kind of step's (steps overlap: the tests' invocations
        happen while start-api serves)."""
        total = time.monotonic() - self.started
        counts: dict[str, tuple[int, float]] = {}
        for name, seconds in self.steps:
            n, sum_ = counts.get(name, (0, 0.0))
            counts[name] = (n + 1, sum_ + seconds)
        parts = [f"{name} {s:.0f} s" if n == 1 else f"{name} {n} x, {s:.0f} s" for name, (n, s) in counts.items()]
        return f"sam local: {total:.0f} s in all ({'; '.join(parts)})"


# ------------------------------------------------------------------------------------ docker


def docker(*args: str, timeout: float = 120) -> str:
    run = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args[:3])} failed: {run.stderr.strip()[-2000:]}")
    return run.stdout.strip()


def image_label(image: str) -> str | None:
    """The recipe label of ``image``; None when there is no such image."""
    found = subprocess.run(["docker", "image", "inspect", image], capture_output=True, text=True)
    if found.returncode != 0:
        return None
    labels: dict[str, str] = json.loads(found.stdout)[0]["Config"].get("Labels") or {}
    return labels.get(LABEL, "")


def published(container: str, port: int) -> str:
    """``127.0.0.1:<port>``: where the host reaches ``port`` of ``container``."""
    return docker("port", container, f"{port}/tcp").splitlines()[0]


def wait_until(ready: Any, what: str, seconds: float, logs_of: str = "") -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if ready():
                return
        except (httpx.TransportError, OSError):
            pass
        if time.monotonic() > deadline:
            logs = subprocess.run(["docker", "logs", logs_of], capture_output=True, text=True) if logs_of else None
            raise AssertionError(f"{what} never answered" + (f":\n{logs.stdout}{logs.stderr}" if logs else ""))
        time.sleep(0.2)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One process at a time (pytest runs of the same checkout share the cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# ------------------------------------------------------------------------------- moto server


def moto_site(python313: Path) -> Path:
    """A directory with moto's server and its dependencies for CPython 3.13, filled by pip once per
    set of versions (the directory's name is their digest)."""
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in MOTO_PACKAGES]
    pins[0] = pins[0].replace("moto", f"moto[{MOTO_EXTRAS}]", 1)
    site = CACHE / f"moto-{hashlib.sha256(' '.join(pins).encode()).hexdigest()[:16]}"
    with locked(CACHE / "moto.lock"):
        if not (site / ".complete").exists():
            partial = site.with_name(site.name + ".partial")
            subprocess.run(["rm", "-rf", str(partial)], check=True)
            install = [str(python313), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            install += ["--no-warn-conflicts", "--root-user-action=ignore", "--target", str(partial), *pins]
            pip = subprocess.run(install, capture_output=True, text=True, timeout=900)
            assert pip.returncode == 0, f"pip could not install moto's server:\n{pip.stderr[-3000:]}"
            subprocess.run(["rm", "-rf", str(partial / "bin")], check=True)
            (partial / ".complete").write_text("\n".join(pins) + "\n")
            partial.rename(site)
    return site


def start_moto(network: str, image: str, site: Path) -> str:
    """moto's server on ``network`` (as ``a2a-sam-moto:5000``); returns the host's URL of it."""
    name = f"{network}-moto"
    command = ["run", "--detach", "--name", name, "--network", network, "--network-alias", MOTO_ALIAS]
    command += ["--publish", f"127.0.0.1::{MOTO_PORT}", "--volume", f"{site}:/opt/moto:ro"]
    command += ["--env", "PYTHONPATH=/opt/moto", "--entrypoint", "python3.13", image]
    # Inside its container, on every interface of it: the network's and the published port's.
    every_interface = "0.0.0.0"  # noqa: S104
    docker(*command, "-m", "moto.server", "--host", every_interface, "--port", str(MOTO_PORT))
    url = f"http://{published(name, MOTO_PORT)}"
    wait_until(lambda: httpx.get(f"{url}/moto-api/", timeout=2).status_code < 500, "moto", 60, logs_of=name)
    return url


# ------------------------------------------------------------------------------------ issuer


def tls_files() -> ServerCertificate:
    """The test CA and the issuer's certificate from it, made once and kept in the cache (so the
    image that trusts the CA is built once)."""
    directory = CACHE / "tls"
    names = ("ca.pem", "issuer.pem", "issuer-key.pem")
    with locked(CACHE / "tls.lock"):
        if not all((directory / name).exists() for name in names):
            made = server_certificate(ISSUER_ALIAS, valid_for=timedelta(days=3650))
            directory.mkdir(parents=True, exist_ok=True)
            for name, pem in zip(names, (made.ca, made.certificate, made.key), strict=True):
                (directory / name).write_bytes(pem)
    ca, certificate, key = ((directory / name).read_bytes() for name in names)
    return ServerCertificate(ca, certificate, key)


def trusting_image(lambda_image: str, ca: bytes, workdir: Path) -> str:
    """The Lambda image plus the test CA in the bundle httpx reads (``SSL_CERT_FILE``: certifi's
    roots and the test CA), built when missing or changed."""
    bundle = Path(certifi.where()).read_bytes() + b"\n" + ca
    base_id = docker("image", "inspect", "--format", "{{.Id}}", lambda_image)
    recipe = hashlib.sha256(base_id.encode() + bundle).hexdigest()[:16]
    tag = f"{TEST_CA_IMAGE}:{lambda_image.rpartition(':')[2]}"
    if image_label(tag) != recipe:
        context = workdir / "test-ca-image"
        context.mkdir(parents=True, exist_ok=True)
        (context / "ca-bundle.pem").write_bytes(bundle)
        (context / "Dockerfile").write_text(
            f"FROM {lambda_image}\n"
            "COPY ca-bundle.pem /etc/a2a-sam-local/ca-bundle.pem\n"
            "ENV SSL_CERT_FILE=/etc/a2a-sam-local/ca-bundle.pem\n"
            f"LABEL {LABEL}={recipe}\n"
        )
        docker("build", "--quiet", "--tag", tag, str(context), timeout=300)
    return tag


def image_with_env(lambda_image: str, env: Mapping[str, str], workdir: Path, name: str) -> str:
    """The Lambda image with ``env`` set, built when missing or changed: for a setting a function's
    template does not declare (SAM passes a function only those), given to SAM as
    ``--invoke-image FUNCTION=...``."""
    base_id = docker("image", "inspect", "--format", "{{.Id}}", lambda_image)
    lines = "".join(f"ENV {key}={value}\n" for key, value in sorted(env.items()))
    recipe = hashlib.sha256(base_id.encode() + lines.encode()).hexdigest()[:16]
    tag = f"a2a-serverless/lambda-python-{name}:{lambda_image.rpartition(':')[2]}"
    if image_label(tag) != recipe:
        context = workdir / f"{name}-image"
        context.mkdir(parents=True, exist_ok=True)
        (context / "Dockerfile").write_text(f"FROM {lambda_image}\n{lines}LABEL {LABEL}={recipe}\n")
        docker("build", "--quiet", "--tag", tag, str(context), timeout=300)
    return tag


def gateway_address(network: str) -> str:
    """The host's address on ``network`` (its bridge's gateway): where a function's container reaches
    a server on the host listening there."""
    return docker("network", "inspect", "--format", "{{(index .IPAM.Config 0).Gateway}}", network)


# The issuer's server: the discovery document and the key set, as files under /srv/www, over TLS.
_ISSUER_SERVER = textwrap.dedent(
    """
    import functools, http.server, ssl
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="/srv/www")
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 443), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain("/srv/tls/issuer.pem", "/srv/tls/issuer-key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()
    """
)


@dataclass
class Issuer:
    """An OIDC issuer the authorizer fetches its keys from (``https://a2a-sam-issuer``), and the keys
    that sign its tokens."""

    key: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256", parameters={"kid": "sam-local-1"}))

    def token(self, subject: str = "alice", *, key: ECKey | None = None, **claims: Any) -> str:
        """A token of this issuer for the agent's audience (signed with ``key`` to forge one)."""
        now = int(time.time())
        signer = key or self.key
        payload = {"iss": ISSUER, "sub": subject, "aud": AUDIENCE, "iat": now, "exp": now + 3600, **claims}
        return jwt.encode({"alg": "ES256", "kid": signer.kid}, payload, signer)

    def principal(self, subject: str = "alice") -> str:
        return f"{ISSUER}|{subject}"

    def start(self, network: str, image: str, tls: ServerCertificate, workdir: Path) -> None:
        www = workdir / "issuer" / "www"
        (www / ".well-known").mkdir(parents=True, exist_ok=True)
        discovery = {"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks.json"}
        (www / ".well-known" / "openid-configuration").write_text(json.dumps(discovery))
        (www / "jwks.json").write_text(json.dumps({"keys": [self.key.as_dict(private=False)]}))
        certificates = workdir / "issuer" / "tls"
        certificates.mkdir(exist_ok=True)
        (certificates / "issuer.pem").write_bytes(tls.certificate)
        (certificates / "issuer-key.pem").write_bytes(tls.key)
        name = f"{network}-issuer"
        command = ["run", "--detach", "--name", name, "--network", network, "--network-alias", ISSUER_ALIAS]
        command += ["--volume", f"{www}:/srv/www:ro", "--volume", f"{certificates}:/srv/tls:ro"]
        docker(*command, "--entrypoint", "python3.13", image, "-c", _ISSUER_SERVER)


# ------------------------------------------------------------------------------------- sam


class FunctionError(RuntimeError):
    """The function raised (its error, as Lambda reports it, is the message, and ``response``)."""

    def __init__(self, message: str, response: dict[str, Any]) -> None:
        super().__init__(message)
        self.response = response


@dataclass
class SamLocal:
    """`sam local` commands of one build, on one network, with one ``--env-vars`` file."""

    build: Path
    """The ``sam build`` directory."""
    network: str
    moto_url: str
    """moto, from the host (``http://127.0.0.1:<port>``)."""
    resources: LocalResources
    """The template's resources in moto (queue URLs as the host reaches them)."""
    env_vars: Path
    parameters: list[str]
    invoke_images: list[str]
    workdir: Path
    issuer: Issuer
    timings: Timings

    def sam(self, command: str, *args: str) -> list[str]:
        """A ``sam local <command>`` of the build, with the session's network, variables and images."""
        line = [str(SAM), "local", command, *args, "--template", str(self.build / "template.yaml")]
        line += ["--skip-pull-image", "--docker-network", self.network, "--env-vars", str(self.env_vars)]
        line += ["--region", REGION, "--parameter-overrides", *self.parameters]
        for image in self.invoke_images:
            line += ["--invoke-image", image]
        return line

    @property
    def environment(self) -> dict[str, str]:
        # A TMPDIR of the session's: SAM keeps its image-build locks there, and a stale one (a SAM
        # killed while it built) would make every later build wait minutes for it.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SAM_"))}
        return {**env, **SAM_ENV, "TMPDIR": str(self.workdir / "sam-tmp")}

    def invoke(self, function_id: str, event: Mapping[str, JsonValue]) -> JsonValue:
        """``sam local invoke`` of a function with ``event``: its response, or :class:`FunctionError`."""
        event_file = self.workdir / f"event-{secrets.token_hex(4)}.json"
        event_file.write_text(json.dumps(event))
        with self.timings.step(f"invoke {function_id}"):
            run = subprocess.run(
                self.sam("invoke", function_id, "--event", str(event_file)),
                capture_output=True,
                text=True,
                env=self.environment,
                cwd=self.workdir,
                timeout=600,
            )
        assert run.returncode == 0, f"sam local invoke {function_id} failed:\n{run.stderr[-4000:]}"
        response: JsonValue = json.loads(run.stdout)
        if isinstance(response, dict) and {"errorMessage", "errorType"} <= response.keys():
            raise FunctionError(f"{function_id}: {response}\n{run.stderr[-3000:]}", response)
        return response

    def handler(self, function_id: str) -> Any:
        """A Lambda handler (``handler(event, context)``) that is ``sam local invoke`` of the function:
        what the local stack's pollers call."""

        def handler(event: Json, context: Any) -> JsonValue:
            return self.invoke(function_id, event)

        return handler

    def aws(self, service: Any) -> Any:
        """A boto3 client of moto, from the host."""
        return aws_client(service, self.moto_url)

    @contextlib.contextmanager
    def start_api(self) -> Iterator[str]:
        """``sam local start-api`` on 127.0.0.1 (warm containers, each started at its first request);
        yields its base URL. Stopped as Ctrl-C stops it, which removes its containers."""
        port = free_port()
        log = (self.workdir / "start-api.log").open("w")
        args = ["--host", "127.0.0.1", "--port", str(port), "--warm-containers", "LAZY"]
        process = subprocess.Popen(
            self.sam("start-api", *args), stdout=log, stderr=subprocess.STDOUT, env=self.environment, cwd=self.workdir
        )
        url = f"http://127.0.0.1:{port}"
        try:
            with self.timings.step("start-api up"):
                # Until it listens: a path of no route is answered at once (403), no function runs.
                wait_until(lambda: _answers(url, process), "sam local start-api", 120)
            with self.timings.step("start-api serving the tests"):
                yield url
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()

    def log(self) -> str:
        """What ``sam local start-api`` printed (its functions' logs too)."""
        return (self.workdir / "start-api.log").read_text()


def _answers(url: str, process: subprocess.Popen[bytes]) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"sam local start-api exited with {process.returncode}")
    return httpx.get(f"{url}/not-a-route", timeout=2).status_code == 403


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def env_vars(template: Json, resources: LocalResources, moto: str) -> Json:
    """The ``--env-vars`` file's content: for every function (``Parameters``), the endpoint and the
    template's resource variables (table, queue URLs, bucket) as the functions reach them."""
    environment = function_environment(template, resources)
    values = {key: environment.values[key] for key in sorted(environment.resource_keys)}
    host = resources.queue_urls and next(iter(resources.queue_urls.values())).split("/")[2]
    in_network = f"{MOTO_ALIAS}:{MOTO_PORT}"
    # moto names a queue by the host that asked for it: the functions reach it by its alias.
    values = {key: value.replace(f"//{host}/", f"//{in_network}/") for key, value in values.items()}
    return {"Parameters": {"A2A_AWS_ENDPOINT_URL": f"http://{in_network}", **values}}


@contextlib.contextmanager
def sam_local(
    build: Path, lambda_image: str, python313: Path, workdir: Path, parameters: Mapping[str, str]
) -> Iterator[SamLocal]:
    """The network, moto with the template's resources, the issuer, and the ``--env-vars`` file;
    ``parameters`` are the template parameters every command gets. Everything is removed at the end."""
    timings = Timings()
    network = f"a2a-sam-{secrets.token_hex(4)}"
    (workdir / "sam-tmp").mkdir(parents=True, exist_ok=True)
    with timings.step("moto's packages (once)"):
        site = moto_site(python313)
    with timings.step("test CA image (once)"):
        tls = tls_files()
        trusting = trusting_image(lambda_image, tls.ca, workdir)
    docker("network", "create", network)
    try:
        with timings.step("containers"):
            moto = start_moto(network, lambda_image, site)
            issuer = Issuer()
            issuer.start(network, lambda_image, tls, workdir)
        template = load_template(build / "template.yaml")
        with timings.step("resources"):
            resources = create_resources(
                aws_client("dynamodb", moto), aws_client("sqs", moto), s3=aws_client("s3", moto), template=template
            )
        env_file = workdir / "env.json"
        env_file.write_text(json.dumps(env_vars(template, resources, moto), indent=2))
        overrides = [f"{name}={value}" for name, value in parameters.items()]
        images = [lambda_image, f"AuthorizerFunction={trusting}"]
        yield SamLocal(build, network, moto, resources, env_file, overrides, images, workdir, issuer, timings)
    finally:
        # Every container on the network is this session's: moto, the issuer, any SAM left behind.
        leftovers = docker("ps", "--all", "--quiet", "--filter", f"network={network}").split()
        if leftovers:
            docker("rm", "--force", *leftovers)
        docker("network", "rm", network)


def report(config: pytest.Config, line: str) -> None:
    """A line on the terminal at the end of the run (from a pytest-xdist worker too: its controller
    writes the lines a worker hands over, tests/conftest.py)."""
    workeroutput: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput.setdefault("terminal_lines", []).append(line)
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None:
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            reporter.write_line(line)
