"""The local cluster: the distributed mode's services and processes on loopback (`mnemoflow cluster`)."""
