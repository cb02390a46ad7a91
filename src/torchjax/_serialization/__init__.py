"""Implementation of torchjax.serialization: PyTorch's zip checkpoint container (_zip), its
pickle stream for saving (_pickler) and restricted loading (_unpickler), and safetensors."""
