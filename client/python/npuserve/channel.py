"""The gRPC channel a Client talks through: TLS, message limits, load
balancing and retries, as the C++ client makes it (client/channel.cc)."""
import dataclasses
import json

import grpc

# Bytes: big outputs come back inline; models and inputs that do not fit a sent
# message go by the streaming calls (the client does it).
MAX_SEND_BYTES = 64 << 20
MAX_RECEIVE_BYTES = 1 << 30


@dataclasses.dataclass(frozen=True)
class TLS:
    """TLS settings. `ca`: PEM root certificates (None: the system's);
    `cert` and `key`: a client certificate and its key for mutual TLS."""
    ca: str = None
    cert: str = None
    key: str = None

    def __post_init__(self):
        if (self.cert is None) != (self.key is None):
            raise ValueError("a TLS client certificate needs its key and the key its certificate (cert= with key=)")


def tls_settings(tls):
    """A TLS, or None for plaintext, from connect()'s tls= argument."""
    if tls is None or tls is False:
        return None
    if tls is True:
        return TLS()
    if isinstance(tls, str):
        return TLS(ca=tls)
    if isinstance(tls, TLS):
        return tls
    raise TypeError("tls= takes False, True (system roots), a CA file path, or npuserve.TLS(ca=, cert=, key=)")


def service_config(retry=True, max_attempts=4):
    """round_robin over every address the target resolves to, and retries of
    UNAVAILABLE (the call never reached the server) on every method."""
    config = {"loadBalancingConfig": [{"round_robin": {}}]}
    if retry and max_attempts > 1:
        config["methodConfig"] = [{
            "name": [{}],
            "retryPolicy": {"maxAttempts": min(max_attempts, 5), "initialBackoff": "0.1s", "maxBackoff": "2s",
                            "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]},
        }]
    return json.dumps(config)


def _read(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"TLS {what} \"{path}\": {e.strerror}") from None


def make_channel(target, tls=None, retry=True, max_send_bytes=MAX_SEND_BYTES):
    if not target:
        raise ValueError("empty target; use HOST:PORT")
    options = [
        ("grpc.max_send_message_length", max_send_bytes),
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.service_config", service_config(retry)),
        ("grpc.enable_retries", 1 if retry else 0),
    ]
    if tls is None:
        return grpc.insecure_channel(target, options=options)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_read(tls.ca, "root certificate") if tls.ca else None,
        private_key=_read(tls.key, "client key") if tls.key else None,
        certificate_chain=_read(tls.cert, "client certificate") if tls.cert else None)
    return grpc.secure_channel(target, credentials, options=options)
