"""TODO"""
def model_program(seed):
    raise NotImplementedError
