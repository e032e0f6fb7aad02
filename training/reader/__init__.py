"""The reader: does this sentence state the answer to the question?"""
