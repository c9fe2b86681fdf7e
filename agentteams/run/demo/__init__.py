"""The offline demo: its scenario (a scratch project and scripted model turns) and its ending when nobody watches."""
