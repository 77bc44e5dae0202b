"""Plugins: policies over the framework's extension points, one module each, registered in ``registry``."""
