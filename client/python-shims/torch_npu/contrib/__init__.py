"""torch_npu.contrib: transfer_to_npu."""
