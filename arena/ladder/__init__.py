"""ladder"""
