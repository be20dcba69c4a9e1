"""One module per upstream plugin, registered in ``compiler.render.registry``."""
