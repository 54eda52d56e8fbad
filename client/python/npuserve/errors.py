"""The one exception npuserve raises for a failed call."""
import grpc


class NpuError(RuntimeError):
    """A call the server (or the channel) refused: `code` is the grpc.StatusCode,
    `details` the server's message, e.g. node "fc1" (MatMul): inner dimensions differ."""

    def __init__(self, code, details):
        self.code = code
        self.details = details
        super().__init__(f"{code.name}: {details}")


def from_rpc_error(error, tls, client_cert):
    """NpuError of a grpc.RpcError, with what to try when TLS and plaintext meet."""
    code, details = error.code(), error.details() or ""
    hint = _transport_hint(code, details, tls, client_cert)
    return NpuError(code, f"{details} (hint: {hint})" if hint else details)


def _transport_hint(code, details, tls, client_cert):
    # The same cases as the C++ client's transport_hint.cc.
    if code != grpc.StatusCode.UNAVAILABLE:
        return None
    if "Ssl handshake failed" in details and "wrong version number" in details:
        return "the server does not speak TLS: connect with tls=False"
    if "Socket closed" in details and not tls:
        return ("the server closed a plaintext connection; if it serves TLS, pass tls='CA.pem' "
                "(or npuserve.TLS(ca=..., cert=..., key=...) if it wants client certificates)")
    if "Socket closed" in details and not client_cert:
        return ("the server closed the TLS connection; if it requires client certificates (mutual TLS), pass "
                "tls=npuserve.TLS(ca=..., cert='CERT.pem', key='KEY.pem')")
    if "Ssl handshake failed" in details or "certificate verify failed" in details:
        return "TLS handshake failed: check that the CA signed the server's certificate for the target's name"
    return None
