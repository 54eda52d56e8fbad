"""apex on npu-server (npuserve-shims): `from apex import amp` with apex's
semantics, for modules on the NPU (torch_npu) and on the host alike. See
apex.amp."""
from apex import amp  # noqa: F401
