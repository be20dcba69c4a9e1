"""trainc: compile Kubeflow Trainer v2 TrainJobs and runtimes into the objects the controller creates.

The package is laid out as the pipeline it implements, one folder per stage:

    load -> resolve -> render -> validate -> emit
"""

__version__ = "0.1.0"
