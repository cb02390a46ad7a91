from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleList, Sequential
from .linear import Identity, Linear
from .loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module

__all__ = ["Module", "Linear", "Identity", "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           "Sequential", "ModuleList", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss"]
